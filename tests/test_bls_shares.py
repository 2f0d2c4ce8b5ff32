"""This node's checks of vote-extension shares (x/bls/shares.py): eager and deferred, a bad share never in a
certificate, suspects, the randomized batch, and the CPU a height's shares cost at 100 validators."""

from __future__ import annotations

import hashlib
import statistics
import time
from pathlib import Path

import pytest
from blspy import G2Element
from test_bls_consensus import (
    ACCEPT,
    SECRETS,
    VE_ACCEPT,
    VE_REJECT,
    bitmap_of,
    certified_height,
    commits,
    entry_of,
    make_chain,
    process,
    propose,
    share,
    verify,
)

from sdk.abci.blocks import encode_vote_extension
from sdk.crypto import bls
from x.bls.shares import ShareChecks

MESSAGE = hashlib.sha256(b"test-bls-shares").digest()


def keys(n: int, tag: bytes = b"") -> list[bytes]:
    return [bls.keygen(hashlib.sha256(b"shares %s %d" % (tag, i)).digest()) for i in range(n)]


def ext(data: bytes) -> bytes:
    return encode_vote_extension({"bls": data})


# --- in the chain ----------------------------------------------------------------------------------------


def test_deferred_checks_accept_a_well_formed_bad_share_and_the_certificate_leaves_it_out(tmp_path: Path) -> None:
    with make_chain(tmp_path / "db") as chain:
        chain.app.module_named("bls").shares = checks = ShareChecks("deferred")  # type: ignore[attr-defined]
        height = chain.height + 1
        bad = bls.sign(SECRETS[3], b"another message")
        assert verify(chain, 3, ext(b"\x01" * 96)) == VE_REJECT  # not a point: refused at once
        assert verify(chain, 3, ext(share(3, chain, height)[:95])) == VE_REJECT
        assert verify(chain, 3, ext(bad)) == VE_ACCEPT  # a point: its check waits for the height's batch
        for i in (1, 2):
            assert verify(chain, i, ext(share(i, chain, height))) == VE_ACCEPT
        certified_height(chain, [0, 1, 2, 3])  # block `height` (certifying the height before)
        shares = {i: share(i, chain, height) for i in range(3)} | {3: bad}
        extended, plain = commits(chain, shares)
        txs = propose(chain, extended)
        assert entry_of(txs).signers == bitmap_of(chain, [0, 1, 2])  # the bad share is left out
        assert process(chain, txs, plain) == ACCEPT
        assert bls.public_key(SECRETS[3]) in checks.suspects
        # a suspect's shares are verified before its vote is accepted
        assert verify(chain, 3, ext(bls.sign(SECRETS[3], b"yet another message"))) == VE_REJECT
        assert verify(chain, 3, ext(share(3, chain, chain.height + 1))) == VE_ACCEPT
        assert verify(chain, 2, ext(bls.sign(SECRETS[2], b"a first bad share"))) == VE_ACCEPT


def test_the_node_setting_picks_the_mode(tmp_path: Path) -> None:
    with make_chain(tmp_path / "db", share_checks="") as chain:
        module = chain.app.module_named("bls")
        assert module.shares.mode == "deferred"  # type: ignore[attr-defined]
        module.configure({"share_checks": "eager"})
        assert module.shares.mode == "eager"  # type: ignore[attr-defined]
        with pytest.raises(ValueError, match="share_checks must be one of"):
            module.configure({"share_checks": "never"})


# --- the checks ------------------------------------------------------------------------------------------


def test_each_share_is_verified_once(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = keys(1)[0]
    key, good = bls.public_key(secret), bls.sign(secret, MESSAGE)
    calls: list[bytes] = []
    real = bls.verify
    monkeypatch.setattr(bls, "verify", lambda *args: calls.append(args[2]) or real(*args))
    checks = ShareChecks("eager")
    assert all(checks.admit(key, MESSAGE, good) for _ in range(5))  # CometBFT asks once per relaying peer
    assert calls == [good] and checks.settle(MESSAGE, [(key, good)]) == [True] and calls == [good]


def test_settling_finds_every_bad_share_and_makes_suspects() -> None:
    secrets = keys(20)
    pairs = [(bls.public_key(s), bls.sign(s, MESSAGE)) for s in secrets]
    bad = {3, 4, 17}
    for i in bad:
        pairs[i] = (pairs[i][0], bls.sign(secrets[i], b"not " + MESSAGE))
    checks = ShareChecks("deferred")
    assert all(checks.admit(key, MESSAGE, share) for key, share in pairs[:10])  # accepted, not verified
    malformed = (pairs[0][0], b"\x02" * 96)  # a late share (CometBFT checked none of those)
    assert checks.settle(MESSAGE, [*pairs, malformed]) == [i not in bad for i in range(20)] + [False]
    assert checks.suspects == {pairs[i][0] for i in (*bad, 0)}
    assert not checks.admit(pairs[4][0], MESSAGE, pairs[5][1])  # a suspect is checked at once
    other = hashlib.sha256(b"another height").digest()
    assert checks.admit(pairs[6][0], other, pairs[5][1])  # the others are not, yet
    assert not checks.admit(pairs[6][0], other, pairs[7][1])  # but a second share of one key is


def test_shares_that_cancel_out_pass_a_plain_aggregate_but_not_the_batch() -> None:
    a, b = keys(2)
    delta = G2Element.from_bytes(bls.sign(keys(1, b"delta")[0], MESSAGE))
    forged_a = bytes(G2Element.from_bytes(bls.sign(a, MESSAGE)) + delta)
    forged_b = bytes(G2Element.from_bytes(bls.sign(b, MESSAGE)) + delta.negate())
    pks = [bls.public_key(a), bls.public_key(b)]
    assert bls.fast_aggregate_verify(pks, MESSAGE, bls.aggregate([forged_a, forged_b]))
    assert not bls.batch_verify(pks, MESSAGE, [forged_a, forged_b])
    assert bls.batch_verify(pks, MESSAGE, [bls.sign(a, MESSAGE), bls.sign(b, MESSAGE)])
    assert bls.batch_verify([], MESSAGE, []) and not bls.batch_verify(pks, MESSAGE, [forged_a])
    checks = ShareChecks("deferred")
    assert checks.admit(pks[0], MESSAGE, forged_a) and checks.admit(pks[1], MESSAGE, forged_b)
    assert checks.settle(MESSAGE, list(zip(pks, [forged_a, forged_b]))) == [False, False]


# --- CPU ---------------------------------------------------------------------------------------------------


def height_cpu_ms(mode: str, secrets: list[bytes], round_: int) -> float:
    """CPU of one height's 99 other shares through ``admit`` plus the batch the height leaves behind (fresh
    shares each round: no parse cached)."""
    message = hashlib.sha256(b"height %d" % round_).digest()
    pairs = [(bls.public_key(s), bls.sign(s, message)) for s in secrets]
    checks = ShareChecks(mode)
    start = time.thread_time()
    assert all(checks.admit(key, message, share) for key, share in pairs)
    checks.settle_pending()
    return (time.thread_time() - start) * 1000


def test_a_heights_shares_at_100_validators_cost_at_most_50_ms_deferred() -> None:
    secrets = keys(99, b"cpu")
    runs: dict[str, list[float]] = {"eager": [], "deferred": []}
    for r in range(3):  # alternated: a slow minute slows both
        for mode in runs:
            runs[mode].append(height_cpu_ms(mode, secrets, 2 * r + (mode == "deferred")))
    eager, deferred = (statistics.median(runs[m]) for m in ("eager", "deferred"))
    print(f"\n99 shares + the height's batch, CPU ms (median of 3): eager {eager:.1f}, deferred {deferred:.1f}")
    assert deferred <= 50 and deferred * 3 <= eager
