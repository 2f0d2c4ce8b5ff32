"""A small HTTP/1.1 client for calls to ML nodes (the TA's, and a host's executor proxy's): keep-alive connections
per node, bodies by Content-Length or chunked, streamed chunk by chunk. General clients (httpx) cost more per
request than the whole TA budget (``agent/README.md``: ≤ 1 ms added), so the little HTTP needed is spoken here.

Any failure to connect, to send or to read is ``UpstreamError``. A pooled connection the node has closed
since (keep-alive timeout) is retried once on a new connection when it fails before any byte came back.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

HEAD_LIMIT = 65536


class UpstreamError(Exception):
    pass


class Response:
    def __init__(
        self,
        pool: Pool,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        status: int,
        headers: dict[str, str],
    ) -> None:
        self.pool = pool
        self.reader = reader
        self.writer = writer
        self.status = status
        self.headers = headers
        self._done = False
        self._reusable = headers.get("connection", "").lower() != "close"

    async def read(self) -> bytes:
        length = self.headers.get("content-length")
        if length is None or "transfer-encoding" in self.headers:
            return b"".join([chunk async for chunk in self.chunks()])
        try:
            data = await self.reader.readexactly(int(length))
        except (OSError, asyncio.IncompleteReadError, ValueError) as error:
            self.close()
            raise UpstreamError(f"{self.pool.url}: the body broke off: {error!r}") from None
        self._done = True
        self.release()
        return data

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body as it arrives; the connection goes back to the pool once it is read whole."""
        reader = self.reader
        try:
            if self.headers.get("transfer-encoding", "").lower() == "chunked":
                while True:
                    line = await reader.readuntil(b"\r\n")
                    size = int(line.split(b";", 1)[0], 16)
                    if size == 0:
                        await reader.readuntil(b"\r\n")  # no trailers from our nodes: the final CRLF
                        break
                    data = await reader.readexactly(size + 2)
                    yield data[:-2]
            elif "content-length" in self.headers:
                length = int(self.headers["content-length"])
                if length:
                    yield await reader.readexactly(length)
            else:
                self._reusable = False
                while data := await reader.read(65536):
                    yield data
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as error:
            self.close()
            raise UpstreamError(f"{self.pool.url}: the body broke off: {error!r}") from None
        self._done = True
        self.release()

    def release(self) -> None:
        if self._done and self._reusable:
            self.pool.put(self.reader, self.writer)
        else:
            self.close()

    def close(self) -> None:
        self._done = True
        self._reusable = False
        self.writer.close()


class Pool:
    def __init__(self, url: str, connect_timeout_s: float, max_idle: int = 256) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"only http:// node URLs are supported, not {url!r}")
        self.url = url.rstrip("/")
        self.host = parts.hostname
        self.port = parts.port or 80
        self.prefix = parts.path.rstrip("/")
        self.host_header = parts.netloc.encode()
        self.connect_timeout_s = connect_timeout_s
        self.max_idle = max_idle
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    def put(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._idle) < self.max_idle and not reader.at_eof():
            self._idle.append((reader, writer))
        else:
            writer.close()

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        try:
            async with asyncio.timeout(self.connect_timeout_s):
                return await asyncio.open_connection(self.host, self.port, limit=HEAD_LIMIT * 4)
        except (OSError, TimeoutError) as error:
            raise UpstreamError(f"{self.url}: cannot connect: {error!r}") from None

    async def request(
        self,
        method: str,
        path: str,
        body: bytes = b"",
        timeout_s: float | None = 60.0,
        content_type: bytes = b"application/json",
        extra_headers: bytes = b"",
    ) -> Response:
        """Send one request and read the status and headers (within ``timeout_s``, when given: else the caller
        times the exchange); the body is the caller's."""
        head = (
            f"{method} {self.prefix}{path} HTTP/1.1\r\n".encode()
            + b"host: "
            + self.host_header
            + b"\r\ncontent-type: "
            + content_type
            + b"\r\ncontent-length: "
            + str(len(body)).encode()
            + b"\r\n"
            + extra_headers
            + b"\r\n"
        )
        while self._idle:
            reader, writer = self._idle.pop()
            if reader.at_eof() or writer.is_closing():
                writer.close()
                continue
            try:
                return await self._exchange(reader, writer, head + body, timeout_s)
            except _Stale:
                continue
        reader, writer = await self._connect()
        try:
            return await self._exchange(reader, writer, head + body, timeout_s)
        except _Stale as stale:
            raise UpstreamError(f"{self.url}: the connection closed before an answer: {stale.cause!r}") from None

    async def _exchange(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, data: bytes, timeout_s: float | None
    ) -> Response:
        try:
            writer.write(data)
            if timeout_s is None:
                raw = await reader.readuntil(b"\r\n\r\n")
            else:
                async with asyncio.timeout(timeout_s):
                    raw = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as error:
            writer.close()
            if not error.partial:
                raise _Stale(error) from None
            raise UpstreamError(f"{self.url}: the answer broke off: {error!r}") from None
        except (ConnectionError, BrokenPipeError) as error:
            writer.close()
            raise _Stale(error) from None
        except (OSError, TimeoutError, asyncio.LimitOverrunError) as error:
            writer.close()
            raise UpstreamError(f"{self.url}: no answer: {error!r}") from None
        except asyncio.CancelledError:  # the caller left (its client did, or a timeout passed): so does the node's
            writer.close()  # request, which frees its slot there rather than waiting for garbage collection
            raise
        lines = raw.decode("latin-1").split("\r\n")
        try:
            status = int(lines[0].split(" ", 2)[1])
        except (IndexError, ValueError):
            writer.close()
            raise UpstreamError(f"{self.url}: not an HTTP answer: {lines[0]!r}") from None
        headers = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        return Response(self, reader, writer, status, headers)

    def close(self) -> None:
        for _, writer in self._idle:
            writer.close()
        self._idle.clear()


class _Stale(Exception):
    def __init__(self, cause: BaseException) -> None:
        self.cause = cause


async def next_chunk(chunks: AsyncIterator[bytes], timeout_s: float) -> bytes | None:
    """A stream's next chunk within ``timeout_s``; None at its end (``UpstreamError``, ``TimeoutError`` raised)."""
    async with asyncio.timeout(timeout_s):
        return await anext(chunks, None)
