"""A model's rules that the chain and programs read the same way (the client library imports this file): the
verification threshold in force for a model.

A model's ``verify_threshold`` is the similarity score, in parts per million, at or above which a re-execution of
its answers matches (x/poc refuses a MATCH below it; a validator's ML node judges with it). A stored 0 means the
default, so models registered before the field existed, and genesis files without it, keep a threshold."""

from __future__ import annotations

from protogen.gonka.inference.v1 import inference_pb2

DEFAULT_VERIFY_THRESHOLD = 800_000
"""The threshold of a model that sets none (0.8: mlnode/VERIFY.md, "Tolerances")."""
MAX_VERIFY_THRESHOLD = 1_000_000
"""Scores are parts per million: 1,000,000 is a perfect match, so no threshold lies above it."""


def verify_threshold(model: inference_pb2.Model | None) -> int:
    """The threshold in force for ``model``, in parts per million: its own, or the default when it sets none (or
    is not registered)."""
    return (model.verify_threshold if model is not None else 0) or DEFAULT_VERIFY_THRESHOLD
