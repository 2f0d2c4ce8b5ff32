"""Membership and non-membership proofs for the sparse Merkle tree (see README.md)."""

from __future__ import annotations

from dataclasses import dataclass
from hashlib import sha256

from .smt import NIBBLE, ZERO, internal_hash, leaf_hash

PROOF_OP_TYPE = "gonka:smt"
"""Name used when a proof travels as a tendermint ``ProofOp.type``."""

MAX_DEPTH = 64


def _is_hash(h: object) -> bool:
    return type(h) is bytes and len(h) == 32


@dataclass(frozen=True)
class Proof:
    """The path from the root to where ``key_hash`` lives or would live.

    ``levels[d]`` is the internal node at depth d as its 16 child hashes, with the on-path
    slot (nibble d of the key hash) set to ZERO: the verifier fills in the hash it computes
    from below. ``leaf`` is ``(key_hash, value_hash)`` of the leaf ending the path, or None
    when the path ends in an empty slot (or the tree is empty).
    """

    levels: tuple[tuple[bytes, ...], ...]
    leaf: tuple[bytes, bytes] | None

    def __post_init__(self) -> None:
        if type(self.levels) is not tuple or len(self.levels) > MAX_DEPTH:
            raise ValueError("levels must be a tuple of at most 64 levels")
        for lvl in self.levels:
            if type(lvl) is not tuple or len(lvl) != 16 or not all(_is_hash(h) for h in lvl):
                raise ValueError("each level must be a tuple of 16 32-byte hashes")
        if self.leaf is not None and (
            type(self.leaf) is not tuple or len(self.leaf) != 2 or not all(_is_hash(h) for h in self.leaf)
        ):
            raise ValueError("leaf must be None or (key_hash, value_hash)")

    def encode(self) -> bytes:
        """u8 level count; per level a u16 mask of non-ZERO slots (bit i = slot i) and those
        hashes in slot order; then u8 0 (empty slot) or u8 1 + key_hash + value_hash."""
        out = [bytes([len(self.levels)])]
        for lvl in self.levels:
            mask = 0
            hs = []
            for i, h in enumerate(lvl):
                if h != ZERO:
                    mask |= 1 << i
                    hs.append(h)
            out.append(mask.to_bytes(2, "big"))
            out.extend(hs)
        if self.leaf is None:
            out.append(b"\x00")
        else:
            out.append(b"\x01")
            out.extend(self.leaf)
        return b"".join(out)

    @classmethod
    def decode(cls, data: bytes) -> Proof:
        """Strict inverse of encode: anything else raises ValueError."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise ValueError("proof must be bytes")
        data = bytes(data)
        if not data:
            raise ValueError("empty proof")
        n = data[0]
        if n > MAX_DEPTH:
            raise ValueError(f"proof has {n} levels, at most {MAX_DEPTH} allowed")
        o = 1
        levels = []
        for _ in range(n):
            if o + 2 > len(data):
                raise ValueError("truncated proof")
            mask = int.from_bytes(data[o : o + 2], "big")
            o += 2
            lvl = []
            for i in range(16):
                if mask >> i & 1:
                    h = data[o : o + 32]
                    if len(h) != 32:
                        raise ValueError("truncated proof")
                    if h == ZERO:
                        raise ValueError("non-canonical proof: zero hash marked present")
                    lvl.append(h)
                    o += 32
                else:
                    lvl.append(ZERO)
            levels.append(tuple(lvl))
        if o >= len(data):
            raise ValueError("truncated proof")
        tag = data[o]
        o += 1
        leaf: tuple[bytes, bytes] | None
        if tag == 0:
            leaf = None
        elif tag == 1:
            if o + 64 > len(data):
                raise ValueError("truncated proof")
            leaf = (data[o : o + 32], data[o + 32 : o + 64])
            o += 64
        else:
            raise ValueError(f"unknown proof terminal tag {tag}")
        if o != len(data):
            raise ValueError("trailing bytes after proof")
        return cls(tuple(levels), leaf)

    def compute_root(self, key_hash: bytes) -> bytes | None:
        """Root implied by this proof for a path along ``key_hash``; None if the proof does
        not describe such a path (a placeholder slot is not ZERO)."""
        h = ZERO if self.leaf is None else leaf_hash(*self.leaf)
        hx = key_hash.hex()
        for depth in range(len(self.levels) - 1, -1, -1):
            slot = NIBBLE[hx[depth]]
            lvl = self.levels[depth]
            if lvl[slot] != ZERO:
                return None
            h = internal_hash(lvl[:slot] + (h,) + lvl[slot + 1 :])
        return h


def verify_membership(root: bytes, key: bytes, value: bytes, proof: Proof) -> bool:
    """True iff ``proof`` shows ``key`` -> ``value`` in the tree with ``root``; never raises."""
    try:
        if not isinstance(proof, Proof) or not _is_hash(root) or proof.leaf is None:
            return False
        kh = sha256(key).digest()
        if proof.leaf != (kh, sha256(value).digest()):
            return False
        return proof.compute_root(kh) == root
    except Exception:
        return False


def verify_nonmembership(root: bytes, key: bytes, proof: Proof) -> bool:
    """True iff ``proof`` shows ``key`` absent from the tree with ``root``: its path ends in
    an empty slot, or in a leaf of another key hash sharing the path's prefix; never raises."""
    try:
        if not isinstance(proof, Proof) or not _is_hash(root):
            return False
        kh = sha256(key).digest()
        if proof.leaf is not None:
            other = proof.leaf[0]
            depth = len(proof.levels)
            if other == kh or other.hex()[:depth] != kh.hex()[:depth]:
                return False
        return proof.compute_root(kh) == root
    except Exception:
        return False
