"""Pseudo-gradient compression: what a worker sends in place of its fp32 pseudo-gradient.

Every codec turns a flat fp32 vector into one uint8 payload of a size fixed by the element count, so
workers can ``all_gather`` payloads of equal length; the receiver decodes each payload to fp32 before
averaging. Error bounds, per element x of a chunk c:

- fp32: exact.
- fp16: |x − x̂| ≤ |x|·2⁻¹¹ + 2⁻²⁵ (round to nearest; |x| must stay below 65504).
- int8: |x − x̂| ≤ scale_c / 2 + |x|·2⁻²² with scale_c = max|c| / 127 (symmetric, round to nearest; the
  second term covers fp32 rounding in the division and the product).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

FP32_BYTES = 4


@dataclass(frozen=True)
class Compression:
    kind: str
    """fp32, fp16 or int8."""
    chunk: int = 4096
    """int8: elements sharing one fp32 scale."""

    def payload_bytes(self, numel: int) -> int:
        if self.kind == "fp32":
            return FP32_BYTES * numel
        if self.kind == "fp16":
            return 2 * numel
        return numel + FP32_BYTES * self._chunks(numel)

    def encode(self, flat: torch.Tensor) -> torch.Tensor:
        if self.kind == "fp32":
            return flat.float().contiguous().view(torch.uint8)
        if self.kind == "fp16":
            return flat.half().contiguous().view(torch.uint8)
        padded, scales = self._chunked(flat)
        quantised = torch.round(padded / scales[:, None]).clamp_(-127, 127).to(torch.int8)
        return torch.cat([quantised.reshape(-1)[: flat.numel()].view(torch.uint8), scales.view(torch.uint8)])

    def decode(self, payload: torch.Tensor, numel: int) -> torch.Tensor:
        if self.kind == "fp32":
            return payload.view(torch.float32).clone()
        if self.kind == "fp16":
            return payload.view(torch.float16).float()
        scales = payload[numel:].view(torch.float32)
        values = payload[:numel].view(torch.int8).float()
        return values * scales.repeat_interleave(self.chunk)[:numel]

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

    def _chunked(self, flat: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The vector zero-padded to whole chunks [chunks, chunk], and each chunk's scale (never 0)."""
        padded = torch.zeros(self._chunks(flat.numel()) * self.chunk, dtype=torch.float32, device=flat.device)
        padded[: flat.numel()] = flat
        padded = padded.view(-1, self.chunk)
        scales = padded.abs().amax(dim=1) / 127
        return padded, torch.where(scales > 0, scales, torch.ones_like(scales))
