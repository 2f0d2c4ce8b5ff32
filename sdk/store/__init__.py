"""Versioned, Merkle-committed key-value storage: CommitStore, CacheKV branches, ICS23 proofs."""

from .cachekv import PRESENT, CacheKV, KVStore
from .commitstore import (
    EMPTY_ROOT,
    CommitStore,
    Snapshot,
    UnprovableError,
    VersionSnapshot,
    VersionUnavailableError,
    VersionView,
)
from .proof import PROOF_OP_TYPE, proof_spec, verify_membership, verify_nonmembership

__all__ = [
    "EMPTY_ROOT",
    "PRESENT",
    "PROOF_OP_TYPE",
    "CacheKV",
    "CommitStore",
    "UnprovableError",
    "KVStore",
    "Snapshot",
    "VersionSnapshot",
    "VersionUnavailableError",
    "VersionView",
    "proof_spec",
    "verify_membership",
    "verify_nonmembership",
]
