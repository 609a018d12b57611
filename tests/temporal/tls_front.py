"""A TLS front for the test dev server, on 127.0.0.1, standing in for a real cluster's endpoint.

It terminates TLS with a certificate of a private CA (`trustme`), requires a client certificate
of its client CA when given one (mTLS), requires `authorization: Bearer <key>` on a
connection's first gRPC request when given an API key (a missing or wrong key is answered
gRPC `UNAUTHENTICATED`, as Temporal Cloud answers it), and otherwise forwards the bytes to the
plaintext dev server. Runs on its own event loop in a daemon thread, so worker and CLI
subprocesses reach it while a test waits synchronously.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import threading
from collections.abc import Sequence
from pathlib import Path

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import trustme
from hpack import Decoder

_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_HEADERS, _CONTINUATION = 0x1, 0x9
_END_HEADERS, _PADDED, _PRIORITY = 0x4, 0x8, 0x20


class TlsFront:
    """`TlsFront(upstream_port, ca, ...)`; `.port` once started; `close()` stops it."""

    def __init__(
        self,
        upstream_port: int,
        ca: trustme.CA,
        *,
        names: Sequence[str] = ("localhost", "127.0.0.1"),
        client_ca: trustme.CA | None = None,
        api_key: str | None = None,
    ) -> None:
        self.upstream_port = upstream_port
        self.api_key = api_key
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert(*names).configure_cert(self.context)
        self.context.set_alpn_protocols(["h2"])
        if client_ca is not None:
            self.context.verify_mode = ssl.CERT_REQUIRED
            client_ca.configure_trust(self.context)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server = asyncio.run_coroutine_threadsafe(self._listen(), self.loop).result(30)
        self.port: int = self.server.sockets[0].getsockname()[1]
        self.refused = 0
        self._open: set[asyncio.StreamWriter] = set()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def _listen(self) -> asyncio.Server:
        return await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.context)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._open.add(writer)
        up_writer: asyncio.StreamWriter | None = None
        try:
            head = b""
            if self.api_key is not None:
                head, authorization = await _first_request(reader)
                if authorization != f"Bearer {self.api_key}":
                    self.refused += 1
                    await _unauthenticated(head, reader, writer)
                    return
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
            up_writer.write(head)
            await asyncio.gather(_pump(reader, up_writer), _pump(up_reader, writer))
        except (OSError, asyncio.IncompleteReadError, ssl.SSLError, ValueError):
            pass
        finally:
            self._open.discard(writer)
            for each in (writer, up_writer):
                if each is not None:
                    each.close()
                    with contextlib.suppress(OSError, ssl.SSLError):
                        await each.wait_closed()

    def close(self) -> None:
        async def stop() -> None:
            self.server.close()
            for writer in list(self._open):  # what Server.close_clients does on 3.13+
                writer.close()
            await self.server.wait_closed()

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            if writer.can_write_eof():
                writer.write_eof()


async def _first_request(reader: asyncio.StreamReader) -> tuple[bytes, str | None]:
    """Read the client's bytes up to the end of its first request's headers; return them and
    that request's `authorization` header."""
    head = await reader.readexactly(len(_PREFACE))
    if head != _PREFACE:
        raise ValueError("not HTTP/2")
    block = b""
    while True:
        frame = await reader.readexactly(9)
        length = int.from_bytes(frame[:3], "big")
        kind, flags = frame[3], frame[4]
        payload = await reader.readexactly(length)
        head += frame + payload
        if kind == _HEADERS:
            start, end = 0, len(payload)
            if flags & _PADDED:
                start, end = 1, len(payload) - payload[0]
            if flags & _PRIORITY:
                start += 5
            block += payload[start:end]
        elif kind == _CONTINUATION:
            block += payload
        else:
            continue
        if flags & _END_HEADERS:
            headers = dict(Decoder().decode(block, raw=False))
            value = headers.get("authorization")
            return head, None if value is None else str(value)


async def _unauthenticated(
    head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Answer every request of the connection gRPC UNAUTHENTICATED, until the client leaves."""
    config = h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
    connection = h2.connection.H2Connection(config=config)
    connection.initiate_connection()
    data = head
    while data:
        try:
            events = connection.receive_data(data)
        except h2.exceptions.ProtocolError:
            return
        for event in events:
            if isinstance(event, h2.events.RequestReceived) and event.stream_id is not None:
                with contextlib.suppress(h2.exceptions.H2Error):
                    connection.send_headers(
                        event.stream_id,
                        [
                            (":status", "200"),
                            ("content-type", "application/grpc"),
                            ("grpc-status", "16"),
                            ("grpc-message", "invalid API key"),
                        ],
                        end_stream=True,
                    )
        writer.write(connection.data_to_send())
        await writer.drain()
        data = await reader.read(65536)


def write_client_credentials(ca: trustme.CA, directory: Path) -> tuple[Path, Path]:
    """A client certificate of `ca` and its key, as PEM files in `directory`."""
    cert = ca.issue_cert("tether-worker@test")
    cert_path, key_path = directory / "client.pem", directory / "client.key"
    cert_path.write_bytes(b"".join(blob.bytes() for blob in cert.cert_chain_pems))
    key_path.write_bytes(cert.private_key_pem.bytes())
    return cert_path, key_path


def write_ca(ca: trustme.CA, path: Path) -> Path:
    path.write_bytes(ca.cert_pem.bytes())
    return path
