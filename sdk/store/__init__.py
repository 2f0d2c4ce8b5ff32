"""Versioned, Merkle-committed key-value storage: CommitStore, CacheKV branches, proofs."""

from .cachekv import CacheKV, KVStore
from .commitstore import CommitStore, VersionUnavailableError
from .proof import PROOF_OP_TYPE, Proof, verify_membership, verify_nonmembership

__all__ = [
    "PROOF_OP_TYPE",
    "CacheKV",
    "CommitStore",
    "KVStore",
    "Proof",
    "VersionUnavailableError",
    "verify_membership",
    "verify_nonmembership",
]
