"""The seccomp filter of a sandboxed command: the few system calls that reach past its namespaces.

Owns `filter_program(machine, block_sockets=...)`: a classic BPF program (the bytes of a `struct
sock_filter` array, as `bwrap --seccomp FD` reads them) that makes these calls fail with `EPERM`:

    socket(AF_UNIX, ...)          only without network access: a filesystem socket is reachable
                                  through the read-only bind of `/` (docker.sock, the D-Bus system
                                  bus, an ssh-agent), and a network namespace does not cover it.
                                  `socketpair` stays allowed (pipes between a command's own
                                  processes, asyncio's self-pipe)
    socket(AF_VSOCK, ...)         VM sockets reach the host, whatever the network namespace
    io_uring_setup/enter/register its operations (socket, connect, ...) bypass this filter
    keyctl, add_key, request_key  the kernel keyrings are not namespaced
    ioctl(TIOCSTI / TIOCLINUX)    pushing input into a terminal (the sandbox also has none:
                                  `--new-session`)

and every call of another architecture's ABI (x32 numbers on x86-64, or an `int 0x80` i386 call),
whose numbers this filter does not know, fails the same way. Everything else is allowed: the
namespaces and the read-only mounts are the sandbox; this filter closes the holes they leave.
Only x86-64 and AArch64 are known; elsewhere there is no filter (`UnsupportedMachine`), and a
sandbox that needs one is unavailable. Does not own when a filter applies (`plan.py`).
"""

from __future__ import annotations

import errno
import struct
from dataclasses import dataclass
from typing import Final

__all__ = ["UnsupportedMachine", "filter_program"]

_LD_ABS_W: Final = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K: Final = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K: Final = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K: Final = 0x06  # BPF_RET | BPF_K
_ALLOW: Final = 0x7FFF0000  # SECCOMP_RET_ALLOW
_DENY: Final = 0x00050000 | errno.EPERM  # SECCOMP_RET_ERRNO | EPERM

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little endian)
_NR: Final = 0
_ARCH: Final = 4
_ARG0_LOW: Final = 16
_ARG1_LOW: Final = 24

_AF_UNIX: Final = 1
_AF_VSOCK: Final = 40
_TIOCSTI: Final = 0x5412
_TIOCLINUX: Final = 0x541C


@dataclass(frozen=True, slots=True)
class _Abi:
    audit_arch: int
    socket: int
    ioctl: int
    denied: tuple[int, ...]
    """io_uring_setup, io_uring_enter, io_uring_register, keyctl, add_key, request_key."""
    x32_bit: int | None = None


_ABIS: Final = {
    "x86_64": _Abi(
        0xC000003E, socket=41, ioctl=16, denied=(425, 426, 427, 250, 248, 249), x32_bit=0x40000000
    ),
    "aarch64": _Abi(0xC00000B7, socket=198, ioctl=29, denied=(425, 426, 427, 219, 217, 218)),
}
_ABIS["amd64"] = _ABIS["x86_64"]
_ABIS["arm64"] = _ABIS["aarch64"]


class UnsupportedMachine(Exception):
    """No filter is known for this machine (`platform.machine()`)."""

    def __init__(self, machine: str) -> None:
        super().__init__(f"no seccomp filter for the {machine or 'unknown'} architecture")
        self.machine = machine


class _Program:
    """A tiny assembler: instructions with forward jumps to named labels."""

    def __init__(self) -> None:
        self._code: list[tuple[int, str | int, str | int, int]] = []
        self._labels: dict[str, int] = {}

    def load(self, offset: int) -> None:
        self._code.append((_LD_ABS_W, 0, 0, offset))

    def jump(self, op: int, value: int, *, true: str | int = 0, false: str | int = 0) -> None:
        self._code.append((op, true, false, value))

    def ret(self, value: int) -> None:
        self._code.append((_RET_K, 0, 0, value))

    def label(self, name: str) -> None:
        self._labels[name] = len(self._code)

    def assemble(self) -> bytes:
        out = bytearray()
        for index, (code, true, false, k) in enumerate(self._code):
            jt = self._offset(index, true)
            jf = self._offset(index, false)
            out += struct.pack("=HBBI", code, jt, jf, k)
        return bytes(out)

    def _offset(self, index: int, target: str | int) -> int:
        if isinstance(target, int):
            return target
        offset = self._labels[target] - index - 1
        if not 0 <= offset <= 255:
            raise ValueError(f"seccomp: jump to {target} out of range")
        return offset


def filter_program(machine: str, *, block_sockets: bool) -> bytes:
    """The filter for `machine` (`platform.machine()`); `block_sockets` adds the `AF_UNIX` rule
    (a command without network access). Raises `UnsupportedMachine`."""
    abi = _ABIS.get(machine.lower())
    if abi is None:
        raise UnsupportedMachine(machine)
    p = _Program()
    p.load(_ARCH)
    p.jump(_JEQ_K, abi.audit_arch, false="deny")
    p.load(_NR)
    if abi.x32_bit is not None:
        p.jump(_JGE_K, abi.x32_bit, true="deny")
    for number in abi.denied:
        p.jump(_JEQ_K, number, true="deny")
    p.jump(_JEQ_K, abi.socket, true="socket")
    p.jump(_JEQ_K, abi.ioctl, true="ioctl")
    p.ret(_ALLOW)
    p.label("socket")
    p.load(_ARG0_LOW)
    if block_sockets:
        p.jump(_JEQ_K, _AF_UNIX, true="deny")
    p.jump(_JEQ_K, _AF_VSOCK, true="deny")
    p.ret(_ALLOW)
    p.label("ioctl")
    p.load(_ARG1_LOW)
    p.jump(_JEQ_K, _TIOCSTI, true="deny")
    p.jump(_JEQ_K, _TIOCLINUX, true="deny")
    p.ret(_ALLOW)
    p.label("deny")
    p.ret(_DENY)
    return p.assemble()
