"""x/bls's params (``gonka.bls.v1.Params``)."""

from __future__ import annotations

from protogen.gonka.bls.v1 import bls_pb2

DEFAULT_CERTIFICATE_RETENTION_BLOCKS = 120_960
"""Seven of the real network's 17,280-block epochs: enough for light clients and for sampling that looks back
over an epoch, while the state keeps a bounded ~300 bytes per block."""


def default_params() -> bls_pb2.Params:
    return bls_pb2.Params(certificate_retention_blocks=DEFAULT_CERTIFICATE_RETENTION_BLOCKS)


def validate_params(params: bls_pb2.Params) -> None:
    """Any retention is valid (0 keeps every certificate)."""
    return None
