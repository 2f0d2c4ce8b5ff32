"""Binary Merkle trees of RFC 6962 (Certificate Transparency), as CometBFT hashes a block's txs
(``crypto/merkle.HashFromByteSlices``): a client proves one leaf is in a root with log2(n) hashes.

    leaf(d)      = sha256(0x00 ‖ d)
    node(l, r)   = sha256(0x01 ‖ l ‖ r)
    root([])     = sha256("")
    root([d])    = leaf(d)
    root(d[0:n]) = node(root(d[0:k]), root(d[k:n])), k the largest power of two below n

A proof of leaf i of n is the list of sibling hashes from the leaf up (``inclusion_proof``);
``verify_inclusion`` recomputes the root from them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(LEAF_PREFIX + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(NODE_PREFIX + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than ``n`` (n ≥ 2)."""
    return 1 << ((n - 1).bit_length() - 1)


def root(items: Sequence[bytes]) -> bytes:
    """The root of the leaves' data ``items`` (in order)."""
    return _root([leaf_hash(item) for item in items]) if items else hashlib.sha256(b"").digest()


def _root(hashes: Sequence[bytes]) -> bytes:
    if len(hashes) == 1:
        return hashes[0]
    k = _split(len(hashes))
    return node_hash(_root(hashes[:k]), _root(hashes[k:]))


def inclusion_proof(items: Sequence[bytes], index: int) -> list[bytes]:
    """The sibling hashes, leaf level first, that prove ``items[index]`` is in ``root(items)``."""
    if not 0 <= index < len(items):
        raise IndexError(f"leaf {index} of {len(items)}")
    return _proof([leaf_hash(item) for item in items], index)


def _proof(hashes: Sequence[bytes], index: int) -> list[bytes]:
    if len(hashes) == 1:
        return []
    k = _split(len(hashes))
    if index < k:
        return [*_proof(hashes[:k], index), _root(hashes[k:])]
    return [*_proof(hashes[k:], index - k), _root(hashes[:k])]


def verify_inclusion(expected_root: bytes, item: bytes, index: int, total: int, proof: Sequence[bytes]) -> bool:
    """Whether ``item`` is leaf ``index`` of a tree of ``total`` leaves with root ``expected_root``."""
    if not 0 <= index < total:
        return False
    try:
        return _climb(leaf_hash(item), index, total, list(proof)) == expected_root
    except ValueError:
        return False


def _climb(node: bytes, index: int, total: int, proof: list[bytes]) -> bytes:
    """The root from a leaf's hash and its path (RFC 6962 section 2.1.1), consuming ``proof`` from the top."""
    if total == 1:
        if proof:
            raise ValueError("proof longer than the tree")
        return node
    if not proof:
        raise ValueError("proof shorter than the tree")
    k = _split(total)
    sibling = proof.pop()
    if index < k:
        return node_hash(_climb(node, index, k, proof), sibling)
    return node_hash(sibling, _climb(node, index - k, total - k, proof))
