"""ICS23 proofs of the state tree: the ``jmt`` crate's proof spec and the ``ics23`` crate's verifier.

A proof is a serialized ``cosmos.ics23.v1.CommitmentProof``: an existence proof for a present key, a
non-existence proof (its neighbours in key-hash order) for an absent one. It travels in a tendermint
``ProofOp`` of type ``PROOF_OP_TYPE``, its ``key`` the store key, its ``data`` the proof.
"""

from __future__ import annotations

from . import _jmt

PROOF_OP_TYPE = "ics23:jmt"
"""Name used when a proof travels as a tendermint ``ProofOp.type``."""


def proof_spec() -> bytes:
    """The tree's ``cosmos.ics23.v1.ProofSpec``, serialized: what a light client checks proofs with."""
    return _jmt.proof_spec()


def _is_hash(h: object) -> bool:
    return type(h) is bytes and len(h) == 32


def verify_membership(root: bytes, key: bytes, value: bytes, proof: bytes) -> bool:
    """True iff ``proof`` shows ``key`` -> ``value`` in the tree with ``root``; never raises."""
    if not (_is_hash(root) and type(key) is bytes and key and type(value) is bytes and type(proof) is bytes):
        return False
    return _jmt.verify_membership(proof, root, key, value)


def verify_nonmembership(root: bytes, key: bytes, proof: bytes) -> bool:
    """True iff ``proof`` shows ``key`` absent from the tree with ``root``; never raises."""
    if not (_is_hash(root) and type(key) is bytes and key and type(proof) is bytes):
        return False
    return _jmt.verify_non_membership(proof, root, key)
