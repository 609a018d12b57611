"""From response headers and bytes to text: content-type classification and charset decoding.

Owns: the media-type table of spec §2.3 step 5 (`text/html`, `application/xhtml+xml` -> html;
`text/*`, JSON and XML types -> text; anything else, or no header, is refused with
`WEB_UNSUPPORTED_CONTENT_TYPE`), the `charset=` parameter, WHATWG-style label aliases (`latin1` and
friends decode as windows-1252), byte-order-mark sniffing, and decoding a possibly truncated body.

Decoding never fails. A label Python does not know, or one naming a non-text codec, falls back to
UTF-8 (browsers also ignore unknown labels); bytes that do not fit the charset — a page that lies
about its encoding — become U+FFFD. A body cut by the byte cap drops a trailing partial character
instead of showing a replacement for it. HTML `<meta charset>` is ignored, as in the spec.
"""

from __future__ import annotations

import codecs
from typing import TYPE_CHECKING, Final

from .errors import WEB_UNSUPPORTED_CONTENT_TYPE, WebError

if TYPE_CHECKING:
    from .vocabulary import BodyKind

__all__ = ["body_kind", "decode_body", "parse_content_type", "text_codec"]

_HTML: Final = frozenset({"text/html", "application/xhtml+xml"})
_TEXT: Final = frozenset({"application/json", "application/xml"})
_WINDOWS_1252: Final = frozenset(
    {
        "ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819", "iso-8859-1",
        "iso-ir-100", "iso8859-1", "iso88591", "iso_8859-1", "iso_8859-1:1987", "l1", "latin1",
        "us-ascii", "windows-1252", "x-cp1252",
    }
)  # fmt: skip
_ALIASES: Final = {
    "iso-8859-8-i": "iso8859_8",
    "x-mac-cyrillic": "mac_cyrillic",
    "x-mac-roman": "mac_roman",
    "macintosh": "mac_roman",
    "gb2312": "gbk",
    "x-gbk": "gbk",
    "unicode-1-1-utf-8": "utf-8",
    "x-sjis": "shift_jis",
    "windows-874": "cp874",
}
_BOMS: Final = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def parse_content_type(header: str | None) -> tuple[str | None, str | None]:
    """`(media type, charset label)`, both lower-cased; None where absent."""
    if not header:
        return None, None
    media, *params = header.split(";")
    charset = None
    for param in params:
        key, sep, value = param.partition("=")
        if sep and key.strip().lower() == "charset":
            charset = value.strip().strip("\"'").strip().lower() or None
    return media.strip().lower() or None, charset


def body_kind(media_type: str | None) -> BodyKind:
    """How a body of this media type is shown. Raises `WEB_UNSUPPORTED_CONTENT_TYPE`."""
    if media_type in _HTML:
        return "html"
    if media_type is not None and (
        media_type.startswith("text/")
        or media_type in _TEXT
        or media_type.endswith(("+json", "+xml"))
    ):
        return "text"
    raise WebError(
        f'unsupported content type "{media_type or "unknown"}"', WEB_UNSUPPORTED_CONTENT_TYPE
    )


def text_codec(label: str | None) -> str:
    """The Python codec for a charset label; UTF-8 for none, unknown or non-text codecs."""
    if label is None:
        return "utf-8"
    if label in _WINDOWS_1252:
        return "cp1252"
    name = _ALIASES.get(label, label)
    try:  # LookupError for unknown labels and for non-text codecs (base64, rot13, ...)
        b"a".decode(name, "replace")
        return codecs.lookup(name).name
    except LookupError:
        return "utf-8"


def decode_body(data: bytes, label: str | None, *, complete: bool) -> str:
    """Decode `data`; a byte-order mark overrides the label. `complete=False` (the body was cut)
    drops a trailing partial character instead of rendering it as U+FFFD."""
    codec = text_codec(label)
    for bom, name in _BOMS:
        if data.startswith(bom):
            codec, data = name, data[len(bom) :]
            break
    decoder = codecs.getincrementaldecoder(codec)(errors="replace")
    return str(decoder.decode(data, final=complete))
