"""Pseudo-gradient compression: what a worker sends in place of its fp32 pseudo-gradient.

Every codec turns a flat fp32 vector into one uint8 payload of a size fixed by the element count, so
workers can ``all_gather`` payloads of equal length; the receiver decodes each payload to fp32 before
averaging. The integer codecs (int8, int4) quantise each chunk c of ``chunk`` elements symmetrically to
the levels −L..L, L = 2^(bits−1) − 1 (127, 7), with one fp32 scale per chunk; int4 packs two codes per
byte. Error bounds, per element x of a chunk c:

- fp32: exact.
- fp16: |x − x̂| ≤ |x|·2⁻¹¹ + 2⁻²⁵ (round to nearest; |x| must stay below 65504).
- int8/int4: |x − x̂| ≤ scale_c / 2 + |x|·2⁻²² with scale_c = max|c| / L (round to nearest; the
  second term covers fp32 rounding in the division and the product).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

FP32_BYTES = 4
INT_BITS = {"int8": 8, "int4": 4}


@dataclass(frozen=True)
class Compression:
    kind: str
    """fp32, fp16, int8 or int4."""
    chunk: int = 4096
    """Integer codecs: elements sharing one fp32 scale."""

    @property
    def bits(self) -> int:
        return INT_BITS[self.kind]

    @property
    def levels(self) -> int:
        """L: the integer codecs' codes run from −L to L."""
        return 2 ** (self.bits - 1) - 1

    def payload_bytes(self, numel: int) -> int:
        if self.kind == "fp32":
            return FP32_BYTES * numel
        if self.kind == "fp16":
            return 2 * numel
        return self._code_bytes(numel) + FP32_BYTES * self._chunks(numel)

    def encode(self, flat: torch.Tensor) -> torch.Tensor:
        if self.kind == "fp32":
            return flat.float().contiguous().view(torch.uint8)
        if self.kind == "fp16":
            return flat.half().contiguous().view(torch.uint8)
        padded, scales = self._chunked(flat)
        quantised = torch.round(padded / scales[:, None]).clamp_(-self.levels, self.levels).reshape(-1)
        return torch.cat([self._pack(quantised[: flat.numel()]), scales.view(torch.uint8)])

    def decode(self, payload: torch.Tensor, numel: int) -> torch.Tensor:
        if self.kind == "fp32":
            return payload.view(torch.float32).clone()
        if self.kind == "fp16":
            return payload.view(torch.float16).float()
        code_bytes = self._code_bytes(numel)
        scales = payload[code_bytes:].clone().view(torch.float32)  # aligned for any numel
        return self._unpack(payload[:code_bytes], numel) * scales.repeat_interleave(self.chunk)[:numel]

    def error_bound(self, flat: torch.Tensor) -> torch.Tensor:
        """The largest decoding error each element of ``flat`` may have."""
        if self.kind == "fp32":
            return torch.zeros_like(flat)
        if self.kind == "fp16":
            return flat.abs() * 2.0**-11 + 2.0**-25
        _, scales = self._chunked(flat)
        return (scales / 2).repeat_interleave(self.chunk)[: flat.numel()] + flat.abs() * 2.0**-22

    def _chunks(self, numel: int) -> int:
        return -(-numel // self.chunk)

    def _code_bytes(self, numel: int) -> int:
        return -(-numel * self.bits // 8)

    def _chunked(self, flat: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The vector zero-padded to whole chunks [chunks, chunk], and each chunk's scale (never 0)."""
        padded = torch.zeros(self._chunks(flat.numel()) * self.chunk, dtype=torch.float32, device=flat.device)
        padded[: flat.numel()] = flat
        padded = padded.view(-1, self.chunk)
        scales = padded.abs().amax(dim=1) / self.levels
        return padded, torch.where(scales > 0, scales, torch.ones_like(scales))

    def _pack(self, quantised: torch.Tensor) -> torch.Tensor:
        """Integer-valued floats in −L..L as bytes: int8 two's complement, narrower codes offset by L and
        packed little end first, 8/bits to a byte (the last byte zero-padded)."""
        if self.bits == 8:
            return quantised.to(torch.int8).view(torch.uint8)
        per_byte = 8 // self.bits
        codes = torch.zeros(self._code_bytes(quantised.numel()) * per_byte, dtype=torch.uint8, device=quantised.device)
        codes[: quantised.numel()] = (quantised + self.levels).to(torch.uint8)
        codes = codes.view(-1, per_byte)
        packed = torch.zeros(codes.shape[0], dtype=torch.uint8, device=quantised.device)
        for slot in range(per_byte):
            packed |= codes[:, slot] << (slot * self.bits)
        return packed

    def _unpack(self, packed: torch.Tensor, numel: int) -> torch.Tensor:
        """``_pack`` undone: the codes −L..L as fp32."""
        if self.bits == 8:
            return packed.view(torch.int8).float()
        mask = (1 << self.bits) - 1
        slots = [(packed >> (slot * self.bits)) & mask for slot in range(8 // self.bits)]
        return torch.stack(slots, dim=1).reshape(-1)[:numel].float() - self.levels
