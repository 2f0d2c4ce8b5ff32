"""Length-delimited framing used by the ABCI socket protocol.

CometBFT v0.38 writes every Request/Response with ``protoio.NewDelimitedWriter``
(``abci/types/messages.go``): an unsigned LEB128 varint holding the message
length, followed by the protobuf bytes.  The reader side uses
``binary.ReadUvarint``, so a varint longer than 10 bytes (or a 10th byte > 1)
is an overflow error; we mirror that and additionally cap the frame length,
because a corrupted prefix must not make us buffer gigabytes.
"""

from __future__ import annotations

from collections.abc import Iterator

# CometBFT caps block.max_bytes at 100 MiB (types.MaxBlockSizeBytes); a
# FinalizeBlock/PrepareProposal request carries the block's txs plus some
# overhead, so the default cap sits comfortably above that.
DEFAULT_MAX_FRAME = 128 * 1024 * 1024
MAX_VARINT_LEN = 10


class FrameError(Exception):
    """The byte stream is not a valid sequence of length-delimited frames."""


def encode_uvarint(value: int) -> bytes:
    """Encode a non-negative integer as an unsigned LEB128 varint."""
    if value < 0:
        raise ValueError("uvarint must be non-negative")
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_frame(msg_bytes: bytes) -> bytes:
    """Prefix a serialized message with its uvarint length."""
    return encode_uvarint(len(msg_bytes)) + msg_bytes


class FrameDecoder:
    """Incremental decoder: feed arbitrary chunks, get complete frames.

    The buffer is a ``bytearray`` consumed from the front; CPython deletes a
    bytearray prefix in O(1) and appends in amortized O(1), and an incomplete
    frame only costs a re-read of its (at most 10-byte) header per chunk, so a
    large frame arriving one byte at a time stays linear.

    After a ``FrameError`` the stream has lost sync; the decoder stays broken
    and raises the same error on every later call.
    """

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        if max_frame < 0:
            raise ValueError("max_frame must be non-negative")
        self.max_frame = max_frame
        self._buf = bytearray()
        self._error: FrameError | None = None

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as a frame."""
        return len(self._buf)

    def feed(self, data: bytes) -> Iterator[bytes]:
        """Append ``data`` and return an iterator over the now-complete frames.

        The data is buffered immediately; frames are cut lazily, so frames
        before a corrupt header are still yielded before ``FrameError`` is
        raised, and frames left unconsumed are yielded by the next call.
        """
        if self._error is None:
            self._buf += data
        return self._frames()

    def _frames(self) -> Iterator[bytes]:
        while True:
            if self._error is not None:
                raise self._error
            header = self._read_header()
            if header is None:
                return
            header_len, length = header
            end = header_len + length
            if len(self._buf) < end:
                return
            frame = bytes(self._buf[header_len:end])
            del self._buf[:end]
            yield frame

    def _read_header(self) -> tuple[int, int] | None:
        """Parse the length prefix: ``(header_len, length)``, or None if incomplete."""
        value = 0
        for i in range(min(len(self._buf), MAX_VARINT_LEN)):
            byte = self._buf[i]
            if byte < 0x80:
                if i == MAX_VARINT_LEN - 1 and byte > 1:
                    raise self._fail("frame length varint overflows 64 bits")
                value |= byte << (7 * i)
                if value > self.max_frame:
                    raise self._fail(f"frame length {value} exceeds maximum {self.max_frame}")
                return i + 1, value
            value |= (byte & 0x7F) << (7 * i)
        if len(self._buf) >= MAX_VARINT_LEN:
            raise self._fail("frame length varint longer than 10 bytes")
        return None

    def _fail(self, message: str) -> FrameError:
        """Poison the decoder: the rest of the stream cannot be framed."""
        self._error = FrameError(message)
        self._buf.clear()
        return self._error
