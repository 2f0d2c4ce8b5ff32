"""x/pool's params (``gonka.pool.v1.Params``)."""

from __future__ import annotations

from protogen.gonka.pool.v1 import pool_pb2


def default_params() -> pool_pb2.Params:
    """Burned governance deposits go to the pool. A fresh message each call."""
    return pool_pb2.Params(burned_deposits_to_pool=True)


def validate_params(params: pool_pb2.Params) -> None:
    """Any value is valid (one flag)."""
    return None
