"""Text and versions as the file tools see them: the version token of a stat, the binary sniff,
strict UTF-8 decoding with its coded errors, and CRLF normalisation. Owns no I/O.
"""

from __future__ import annotations

import os
from typing import Final

from .errors import FS_NOT_TEXT, FsError

__all__ = ["BEFORE_TEXT_LIMIT", "SNIFF_BYTES", "decode", "is_binary", "lf", "version_of"]

SNIFF_BYTES: Final = 8192
BEFORE_TEXT_LIMIT: Final = 10 * 1024 * 1024
"""A prior text this big (or a new one) is not kept for the diff."""


def version_of(st: os.stat_result) -> str:
    """The opaque version token: device:inode:size:mtime_ns:ctime_ns."""
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def is_binary(head: bytes) -> bool:
    """A NUL byte in the first 8192 bytes marks a file as binary."""
    return b"\x00" in head[:SNIFF_BYTES]


def decode(data: bytes, verb: str, display: str) -> str:
    """Strict UTF-8; FS_NOT_TEXT (`cannot <verb> "<path>": binary file` / `... invalid UTF-8
    text`) otherwise."""
    if is_binary(data):
        raise FsError(f'cannot {verb} "{display}": binary file', FS_NOT_TEXT)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise FsError(
            f'cannot {verb} "{display}": invalid UTF-8 text', FS_NOT_TEXT, cause=error
        ) from None


def lf(text: str) -> str:
    """CRLF line ends as LF."""
    return text.replace("\r\n", "\n")
