"""BLS12-381: sdk.crypto.bls (blspy) against the pure-Python reference py_ecc, byte for byte and verdict for verdict.

py_ecc costs 0.2-0.8 s per pairing-level operation, so its outputs are computed once per module.
"""

from __future__ import annotations

import random

import pytest
from blspy import G1Element
from eth_utils.exceptions import ValidationError
from py_ecc.bls import G2ProofOfPossession as ref
from py_ecc.bls.g2_primitives import subgroup_check
from py_ecc.bls.point_compression import compress_G1, compress_G2, modular_squareroot_in_FQ2
from py_ecc.optimized_bls12_381 import FQ, FQ2, is_on_curve
from py_ecc.optimized_bls12_381 import b as B1
from py_ecc.optimized_bls12_381 import b2 as B2
from py_ecc.optimized_bls12_381 import field_modulus as Q

from sdk.crypto import bls

MESSAGE = b"gonka bls test message"
INFINITY_G1 = b"\xc0" + b"\x00" * 47
INFINITY_G2 = b"\xc0" + b"\x00" * 95
# EIP-2333 test cases 0-3: (seed, master_SK)
EIP2333_MASTER = [
    (
        "c55257c360c07c72029aebc1b53c05ed0362ada38ead3e3e9efa3708e53495531f09a6987599d18264c1e1c92f2cf141630c7a3c4ab7c81b2f001698e7463b04",
        6083874454709270928345386274498605044986640685124978867557563392430687146096,
    ),
    (
        "3141592653589793238462643383279502884197169399375105820974944592",
        29757020647961307431480504535336562678282505419141012933316116377660817309383,
    ),
    (
        "0099FF991111002299DD7744EE3355BBDD8844115566CC55663355668888CC00",
        27580842291869792442942448775674722299803720648445448686099262467207037398656,
    ),
    (
        "d4e56740f876aef8c010b86a40d5f56745a118d0906a34e69aec8c0db1cb8fa3",
        19022158461524446591288038168518313374041767046816487870552872741050760015818,
    ),
]


def non_subgroup_g1() -> bytes:
    """The first x giving a point on E(Fp) outside the order-r subgroup, compressed."""
    x = 1
    while True:
        y2 = (x**3 + B1.n) % Q
        y = pow(y2, (Q + 1) // 4, Q)
        if y * y % Q == y2:
            point = (FQ(x), FQ(y), FQ(1))
            assert is_on_curve(point, B1)
            if not subgroup_check(point):
                return compress_G1(point).to_bytes(48, "big")
        x += 1


def _non_subgroup_g2() -> bytes:
    x0 = 1
    while True:
        x = FQ2([x0, 1])
        y = modular_squareroot_in_FQ2(x**3 + B2)
        if y is not None:
            point = (x, y, FQ2.one())
            assert is_on_curve(point, B2)
            if not subgroup_check(point):
                z1, z2 = compress_G2(point)
                return z1.to_bytes(48, "big") + z2.to_bytes(48, "big")
        x0 += 1


@pytest.fixture(scope="module")
def keys() -> list[bytes]:
    rng = random.Random(2333)
    return [rng.randrange(1, bls.CURVE_ORDER).to_bytes(32, "big") for _ in range(4)]


@pytest.fixture(scope="module")
def ref_out(keys: list[bytes]) -> dict:
    """py_ecc's public keys, signatures, proofs and aggregate for ``keys`` (computed once)."""
    ints = [int.from_bytes(k, "big") for k in keys]
    sigs = [ref.Sign(sk, MESSAGE) for sk in ints]
    return {
        "pks": [ref.SkToPk(sk) for sk in ints],
        "sigs": sigs,
        "pops": [ref.PopProve(sk) for sk in ints],
        "agg": ref.Aggregate(sigs),
    }


@pytest.fixture(scope="module")
def ours(keys: list[bytes]) -> dict:
    sigs = [bls.sign(k, MESSAGE) for k in keys]
    return {
        "pks": [bls.public_key(k) for k in keys],
        "sigs": sigs,
        "pops": [bls.pop_prove(k) for k in keys],
        "agg": bls.aggregate(sigs),
    }


@pytest.fixture(scope="module")
def bad_points() -> tuple[bytes, bytes]:
    return non_subgroup_g1(), _non_subgroup_g2()


# --- keygen ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("seed", "master"), EIP2333_MASTER)
def test_keygen_eip2333_master_vectors(seed: str, master: int) -> None:
    assert bls.keygen(bytes.fromhex(seed)) == master.to_bytes(32, "big")


def test_keygen_matches_py_ecc() -> None:
    rng = random.Random(7)
    for size in (32, 33, 48, 64, 100):
        seed = rng.randbytes(size)
        assert int.from_bytes(bls.keygen(seed), "big") == ref.KeyGen(seed)
    seed = bytes(32)
    assert int.from_bytes(bls.keygen(seed, key_info=b"gonka"), "big") == ref.KeyGen(seed, b"gonka")


def test_keygen_refuses_short_seed() -> None:
    with pytest.raises(bls.BlsError):
        bls.keygen(b"\x01" * 31)


# --- byte-for-byte equality -------------------------------------------------------------------------


def test_outputs_equal_py_ecc(ours: dict, ref_out: dict) -> None:
    for name in ("pks", "sigs", "pops", "agg"):
        assert ours[name] == ref_out[name], name
    assert all(len(pk) == bls.PUBLIC_KEY_SIZE for pk in ours["pks"])
    assert all(len(sig) == bls.SIGNATURE_SIZE for sig in ours["sigs"] + ours["pops"])


def test_aggregate_of_one_and_of_infinity(ours: dict) -> None:
    assert bls.aggregate(ours["sigs"][:1]) == ours["sigs"][0] == ref.Aggregate(ours["sigs"][:1])
    assert bls.aggregate([INFINITY_G2]) == INFINITY_G2 == ref.Aggregate([INFINITY_G2])


# --- cross verification ---------------------------------------------------------------------------


def test_we_verify_py_ecc(ref_out: dict) -> None:
    pks, sigs, pops, agg = ref_out["pks"], ref_out["sigs"], ref_out["pops"], ref_out["agg"]
    assert all(bls.verify(pk, MESSAGE, sig) for pk, sig in zip(pks, sigs))
    assert all(bls.pop_verify(pk, pop) for pk, pop in zip(pks, pops))
    assert bls.fast_aggregate_verify(pks[:1], MESSAGE, sigs[0])
    assert bls.fast_aggregate_verify(pks, MESSAGE, agg)
    assert not bls.fast_aggregate_verify(pks, MESSAGE + b"!", agg)
    assert not bls.fast_aggregate_verify(pks[:3], MESSAGE, agg)
    assert not bls.verify(pks[1], MESSAGE, sigs[0])
    assert not bls.pop_verify(pks[0], pops[1])
    # a proof is not a signature over the key bytes (separate DST)
    assert not bls.pop_verify(pks[0], sigs[0])


def test_py_ecc_verifies_ours(ours: dict) -> None:
    pks, sigs, pops, agg = ours["pks"], ours["sigs"], ours["pops"], ours["agg"]
    assert ref.Verify(pks[0], MESSAGE, sigs[0])
    assert ref.PopVerify(pks[1], pops[1])
    assert ref.FastAggregateVerify(pks[:1], MESSAGE, sigs[0])
    assert ref.FastAggregateVerify(pks, MESSAGE, agg)
    assert not ref.FastAggregateVerify(pks, MESSAGE + b"!", agg)


def test_tampered_aggregate(ours: dict) -> None:
    pks, agg = ours["pks"], ours["agg"]
    flipped = agg[:1] + bytes([agg[1] ^ 1]) + agg[2:]  # no longer a subgroup point: blspy refuses to parse it
    assert bls.fast_aggregate_verify(pks, MESSAGE, flipped) is False
    assert ref.FastAggregateVerify(pks, MESSAGE, flipped) is False
    partial = bls.aggregate(ours["sigs"][:3])  # a valid point, short one signer
    assert bls.fast_aggregate_verify(pks, MESSAGE, partial) is False
    assert ref.FastAggregateVerify(pks, MESSAGE, partial) is False


# --- edge cases, same verdict as py_ecc ------------------------------------------------------------


def test_identity_public_key(ours: dict) -> None:
    pks, agg = ours["pks"], ours["agg"]
    assert ref.KeyValidate(INFINITY_G1) is False
    with pytest.raises(bls.BlsError, match="identity"):
        bls.check_public_key(INFINITY_G1)
    # blspy alone says True here; the wrapper must not
    assert bls.fast_aggregate_verify(pks + [INFINITY_G1], MESSAGE, agg) is False
    assert ref.FastAggregateVerify(pks + [INFINITY_G1], MESSAGE, agg) is False
    assert bls.verify(INFINITY_G1, MESSAGE, INFINITY_G2) is False
    assert ref.Verify(INFINITY_G1, MESSAGE, INFINITY_G2) is False
    assert bls.pop_verify(INFINITY_G1, INFINITY_G2) is False
    assert bls.fast_aggregate_verify([INFINITY_G1], MESSAGE, INFINITY_G2) is False


def test_empty_public_key_list(ours: dict) -> None:
    for sig in (INFINITY_G2, ours["agg"], b"\x00" * 96):
        assert bls.fast_aggregate_verify([], MESSAGE, sig) is False
        assert ref.FastAggregateVerify([], MESSAGE, sig) is False


def test_infinity_signature(ours: dict) -> None:
    pk = ours["pks"][0]
    assert bls.verify(pk, MESSAGE, INFINITY_G2) is False
    assert ref.Verify(pk, MESSAGE, INFINITY_G2) is False
    # keys that cancel: aggregate key is the identity, the infinity signature "verifies" it
    negated = bytes(G1Element.from_bytes(pk).negate())
    assert bls.fast_aggregate_verify([pk, negated], MESSAGE, INFINITY_G2) is False
    assert ref.FastAggregateVerify([pk, negated], MESSAGE, INFINITY_G2) is False


def test_out_of_subgroup_points(ours: dict, bad_points: tuple[bytes, bytes]) -> None:
    bad_g1, bad_g2 = bad_points
    pks, agg = ours["pks"], ours["agg"]
    assert ref.KeyValidate(bad_g1) is False
    with pytest.raises(bls.BlsError, match="subgroup"):
        bls.check_public_key(bad_g1)
    assert bls.fast_aggregate_verify(pks + [bad_g1], MESSAGE, agg) is False
    assert ref.FastAggregateVerify(pks + [bad_g1], MESSAGE, agg) is False
    assert bls.fast_aggregate_verify(pks, MESSAGE, bad_g2) is False
    assert ref.FastAggregateVerify(pks, MESSAGE, bad_g2) is False
    assert bls.verify(pks[0], MESSAGE, bad_g2) is False
    assert bls.pop_verify(pks[0], bad_g2) is False
    with pytest.raises(bls.BlsError):
        bls.aggregate([agg, bad_g2])


def test_check_public_key_reasons(ours: dict) -> None:
    pk = ours["pks"][0]
    bls.check_public_key(pk)
    with pytest.raises(bls.BlsError, match="48 bytes"):
        bls.check_public_key(pk[:47])
    for raw in (
        bytes([pk[0] & 0x7F]) + pk[1:],  # compression flag cleared
        (Q | (1 << 383)).to_bytes(48, "big"),  # x = p
        INFINITY_G1[:-1] + b"\x01",
    ):  # infinity flag, nonzero x
        assert ref.KeyValidate(raw) is False
        with pytest.raises(bls.BlsError, match="not a valid"):
            bls.check_public_key(raw)


def test_malformed_inputs_are_false_not_exceptions(ours: dict) -> None:
    pks, agg = ours["pks"], ours["agg"]
    for sig in (agg[:95], b"", b"\x00" * 96, None):
        assert bls.fast_aggregate_verify(pks, MESSAGE, sig) is False
        assert bls.verify(pks[0], MESSAGE, sig) is False
    for keys in ([pks[0], b"junk"], [None], None):
        assert bls.fast_aggregate_verify(keys, MESSAGE, agg) is False


def test_aggregate_refusals(ours: dict) -> None:
    with pytest.raises(bls.BlsError, match="empty"):
        bls.aggregate([])
    with pytest.raises(ValidationError):
        ref.Aggregate([])
    with pytest.raises(bls.BlsError):
        bls.aggregate([ours["sigs"][0][:95]])


@pytest.mark.parametrize("secret", [0, bls.CURVE_ORDER, 2**256 - 1])
def test_bad_secret_keys_refused(secret: int) -> None:
    raw = secret.to_bytes(32, "big")
    for fn in (bls.public_key, bls.pop_prove, lambda s: bls.sign(s, MESSAGE)):
        with pytest.raises(bls.BlsError):
            fn(raw)
    with pytest.raises(ValidationError):
        ref.Sign(secret, MESSAGE)
    with pytest.raises(bls.BlsError):
        bls.public_key(b"\x01" * 31)
