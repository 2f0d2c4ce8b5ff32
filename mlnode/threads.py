"""Torch's intra-op thread count for one block of work: replays and verifications that must run on a
given count (exact reproduction depends on it) restore the caller's afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch


@contextmanager
def torch_threads(count: int) -> Iterator[None]:
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
