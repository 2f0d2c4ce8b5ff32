"""Versioned, Merkle-committed key-value storage: CommitStore, CacheKV branches, proofs."""

from .cachekv import CacheKV, KVStore
from .commitstore import CommitStore, VersionUnavailableError, VersionView
from .proof import PROOF_OP_TYPE, Proof, verify_membership, verify_nonmembership

__all__ = [
    "PROOF_OP_TYPE",
    "CacheKV",
    "CommitStore",
    "KVStore",
    "Proof",
    "VersionUnavailableError",
    "VersionView",
    "verify_membership",
    "verify_nonmembership",
]
