"""x/stake: collateral in and out (unbonding over epochs, slashes that reach unbonding collateral), the voting
power rules of power.py (unit-tested, and at InitChain with one host holding most collateral), the validator
set changing only at the set-validators stage, bad input refused with a clear code and no state change, and
the Cosmos and Gonka queries answering what state holds.

Every in-process chain here uses short epochs (length 6: epoch 0 is heights 1-6, epoch n ≥ 1 starts at
6n + 1, its set-validators stage at 6n + 3) and checks every invariant after every block. The helpers at
the top are shared with tests/test_slashing.py.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from chain import InProcessChain
from cosmpy.protos.cosmos.base.query.v1beta1 import pagination_pb2
from cosmpy.protos.cosmos.crypto.ed25519 import keys_pb2 as ed25519
from cosmpy.protos.cosmos.staking.v1beta1 import query_pb2 as cosmos_query
from cosmpy.protos.cosmos.staking.v1beta1 import staking_pb2
from cosmpy.protos.cosmos.staking.v1beta1 import tx_pb2 as staking_tx
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from google.protobuf.message import Message

from gonkad import genesis
from protogen.gonka.stake.v1 import query_pb2, stake_pb2
from protogen.gonka.stake.v1 import tx_pb2 as stake_tx
from sdk.address import module_address
from sdk.cli.flags import message_dict
from sdk.client.txbuilder import address_of, sign_tx
from sdk.crypto import bech32, secp256k1
from sdk.services import cosmos, gonka
from x.genutil.gentx import build_gentx
from x.stake import keys as stake_keys
from x.stake import power
from x.stake.params import default_params

CHAIN = "gonka-stake"
DENOM = "ngonka"
GNK = 10**9
KEYS = [secp256k1.PrivateKey(bytes([0x80 + i]) * 32) for i in range(8)]
FUNDS = 10_000 * GNK
SHORT_EPOCHS = {
    "epoch_length": "6",
    "race_validation_offset": "1",
    "set_validators_offset": "2",
    "inference_offset": "3",
}
STAKE_QUERY = gonka("stake").query
COSMOS_QUERY = cosmos("staking").query


# --- shared helpers ---------------------------------------------------------------------------------------


def operator(key: secp256k1.PrivateKey) -> bytes:
    return secp256k1.address_bytes(key.public_key)


def valoper(key: secp256k1.PrivateKey) -> str:
    return bech32.encode(operator(key), bech32.VALOPER_PREFIX)


def consensus_key(i: int) -> bytes:
    """Host ``i``'s ed25519 consensus key (any 32 bytes do: the chain never checks a signature with it)."""
    return bytes([0xC0 + i]) * 32


def host_chain(
    path: Path,
    collateral: Sequence[int],
    *,
    stake: dict[str, Any] | None = None,
    epochs: dict[str, str] | None = SHORT_EPOCHS,
    extra: dict[str, Any] | None = None,
    **options: Any,
) -> InProcessChain:
    """A chain whose hosts ``KEYS[i]`` (consensus key ``consensus_key(i)``) registered by gentx with
    ``collateral[i]``; every key in KEYS funded with FUNDS ngonka and 10^6 uother. ``stake``: stake params
    changed from the defaults; ``extra``: other modules' genesis sections. Reward issuance is off (an initial
    epoch reward of 0) unless ``extra`` has a rewards section, so balances and supply move only as these
    tests move them (tests/test_rewards.py covers rewards)."""
    state = genesis.default_app_state()
    if epochs is not None:
        state["epochs"] = {"params": dict(epochs)}
    if stake:
        params = message_dict(default_params())
        params.update(stake)
        state["stake"] = {"params": params}
    state["rewards"]["params"]["initial_epoch_reward"] = "0"
    state.update(extra or {})
    gentxs = [
        build_gentx(KEYS[i], f"host{i}", consensus_key(i), (DENOM, amount), CHAIN)
        for i, amount in enumerate(collateral)
    ]
    state["genutil"] = {"gen_txs": [base64.b64encode(tx).decode() for tx in gentxs]}
    accounts = {address_of(k): [(DENOM, FUNDS), ("uother", 10**6)] for k in KEYS}
    return InProcessChain(path, accounts, chain_id=CHAIN, app_state=state, **options)


def signed(chain: InProcessChain, key: secp256k1.PrivateKey, *msgs: Message, sequence_offset: int = 0) -> bytes:
    account = chain.account(address_of(key))
    assert account is not None
    return sign_tx(
        key, list(msgs), chain.chain_id, account.account_number, account.sequence + sequence_offset, gas_limit=2_000_000
    )


def deliver(
    chain: InProcessChain, key: secp256k1.PrivateKey, *msgs: Message, **block: Any
) -> tuple[abci.ExecTxResult, abci.ResponseFinalizeBlock]:
    """One tx of ``msgs`` signed by ``key`` in the next block (committed); its result and the block's."""
    response = chain.block([signed(chain, key, *msgs)], **block)
    return response.tx_results[0], response


def coin(amount: int | str, denom: str = DENOM) -> dict[str, str]:
    return {"denom": denom, "amount": str(amount)}


def deposit(key: secp256k1.PrivateKey, amount: int | str, denom: str = DENOM) -> stake_tx.MsgDepositCollateral:
    return stake_tx.MsgDepositCollateral(operator=address_of(key), amount=coin(amount, denom))


def withdraw(key: secp256k1.PrivateKey, amount: int | str, denom: str = DENOM) -> stake_tx.MsgWithdrawCollateral:
    return stake_tx.MsgWithdrawCollateral(operator=address_of(key), amount=coin(amount, denom))


def create_validator(key: secp256k1.PrivateKey, pubkey: bytes, amount: int) -> staking_tx.MsgCreateValidator:
    msg = staking_tx.MsgCreateValidator(
        description=staking_pb2.Description(moniker="late"), validator_address=valoper(key), value=coin(amount)
    )
    msg.pubkey.Pack(ed25519.PubKey(key=pubkey), type_url_prefix="/")
    return msg


def updates(response: abci.ResponseFinalizeBlock | abci.ResponseInitChain) -> list[tuple[bytes, int]]:
    listed = response.validator_updates if isinstance(response, abci.ResponseFinalizeBlock) else response.validators
    return [(u.pub_key.ed25519, u.power) for u in listed]


def events(response: abci.ResponseFinalizeBlock, kind: str) -> list[dict[str, str]]:
    """Attributes of every ``kind`` event of the block: begin/end block's and every tx's."""
    found = [e for e in response.events if e.type == kind]
    found += [e for r in response.tx_results for e in r.events if e.type == kind]
    return [{a.key: a.value for a in e.attributes} for e in found]


def host(chain: InProcessChain, key: secp256k1.PrivateKey) -> stake_pb2.Host:
    return chain.query(
        STAKE_QUERY + "Host", query_pb2.QueryHostRequest(operator=address_of(key)), query_pb2.QueryHostResponse
    ).host


def collateral(chain: InProcessChain, key: secp256k1.PrivateKey) -> tuple[int, int]:
    """(bonded, unbonding) by the Collateral query."""
    reply = chain.query(
        STAKE_QUERY + "Collateral",
        query_pb2.QueryCollateralRequest(operator=address_of(key)),
        query_pb2.QueryCollateralResponse,
    )
    assert reply.denom == DENOM
    return int(reply.bonded), int(reply.unbonding)


def unbonding(chain: InProcessChain, key: secp256k1.PrivateKey) -> list[tuple[int, int, int]]:
    """(amount, initial_amount, completion_epoch) of each unbonding entry, by the UnbondingEntries query."""
    reply = chain.query(
        STAKE_QUERY + "UnbondingEntries",
        query_pb2.QueryUnbondingEntriesRequest(operator=address_of(key)),
        query_pb2.QueryUnbondingEntriesResponse,
    )
    return [(int(e.amount), int(e.initial_amount), e.completion_epoch) for e in reply.entries]


def pool(chain: InProcessChain) -> tuple[int, int]:
    """(bonded, not bonded) by the cosmos Pool query."""
    reply = chain.query(COSMOS_QUERY + "Pool", cosmos_query.QueryPoolRequest(), cosmos_query.QueryPoolResponse)
    return int(reply.pool.bonded_tokens), int(reply.pool.not_bonded_tokens)


def powers(chain: InProcessChain) -> dict[str, int]:
    reply = chain.query(
        STAKE_QUERY + "ValidatorPowers", query_pb2.QueryValidatorPowersRequest(), query_pb2.QueryValidatorPowersResponse
    )
    assert reply.total == sum(p.weight for p in reply.powers)
    return {p.operator: p.weight for p in reply.powers}


def blocks_to(chain: InProcessChain, height: int) -> None:
    """Empty blocks until ``height`` is committed."""
    while chain.height < height:
        chain.block()


# --- unbonding -------------------------------------------------------------------------------------------


def test_withdrawal_is_paid_at_the_completion_epochs_set_validators_stage(tmp_path: Path) -> None:
    """With unbonding_epochs 2, collateral withdrawn in epoch 1 (height 8) is paid at epoch 3's set-validators
    block (19 + 2 = 21), not a block before; until then the entry, the Collateral query and the pools agree."""
    bonded, amount = 1_000 * GNK + 7, 123_456_789_015
    with host_chain(tmp_path / "db", [bonded, 500 * GNK], stake={"unbonding_epochs": 2}) as chain:
        blocks_to(chain, 7)
        balance = chain.balance(operator(KEYS[0]))
        result, response = deliver(chain, KEYS[0], withdraw(KEYS[0], amount))
        assert result.code == 0, result.log
        assert chain.height == 8
        assert events(response, "withdraw_collateral") == [
            {"operator": address_of(KEYS[0]), "amount": f"{amount}{DENOM}", "completion_epoch": "3"}
        ]
        for height in range(8, 21):
            if height > 8:
                response = chain.block()
                assert events(response, "complete_unbonding") == []
            assert chain.balance(operator(KEYS[0])) == balance, height
            assert unbonding(chain, KEYS[0]) == [(amount, amount, 3)]
            assert collateral(chain, KEYS[0]) == (bonded - amount, amount)
            assert pool(chain) == (bonded - amount + 500 * GNK, amount)
        response = chain.block()
        assert chain.height == 21
        assert events(response, "complete_unbonding") == [
            {"operator": address_of(KEYS[0]), "amount": f"{amount}{DENOM}"}
        ]
        assert chain.balance(operator(KEYS[0])) == balance + amount
        assert unbonding(chain, KEYS[0]) == []
        assert collateral(chain, KEYS[0]) == (bonded - amount, 0)
        assert pool(chain) == (bonded - amount + 500 * GNK, 0)


def test_a_slash_during_unbonding_reduces_the_payout(tmp_path: Path) -> None:
    """A 10% slash at height 10 takes floor(10%) of the bonded collateral and of the unbonding entry, and
    pays both into the community pool (the supply is unchanged); the entry (due at epoch 2's set-validators block,
    height 15) pays what is left."""
    bonded, amount = 1_000 * GNK + 7, 123_456_789_015
    with host_chain(tmp_path / "db", [bonded, 500 * GNK]) as chain:
        blocks_to(chain, 7)
        assert deliver(chain, KEYS[0], withdraw(KEYS[0], amount))[0].code == 0
        chain.block()
        balance, supply = chain.balance(operator(KEYS[0])), chain.supply()
        taken: list[int] = []
        app = chain.app
        response = chain.block(
            during=lambda ctx: taken.append(
                app.slashing_keeper.slash(ctx, operator(KEYS[0]), Fraction(1, 10), "test", ())
            )
        )
        assert chain.height == 10
        bonded_cut = (bonded - amount) // 10  # 876_543_210_992 -> 87_654_321_099
        entry_cut = amount // 10  # 12_345_678_901 (of ...901.5)
        assert (bonded_cut, entry_cut) == (87_654_321_099, 12_345_678_901)
        assert taken == [bonded_cut + entry_cut]
        assert events(response, "slash") == [
            {
                "operator": address_of(KEYS[0]),
                "amount": f"{bonded_cut + entry_cut}{DENOM}",
                "reason": "test",
                "pool": f"{bonded_cut + entry_cut}{DENOM}",
            }
        ]
        assert chain.supply() == supply
        assert chain.balance(module_address("pool")) == bonded_cut + entry_cut
        assert collateral(chain, KEYS[0]) == (bonded - amount - bonded_cut, amount - entry_cut)
        assert unbonding(chain, KEYS[0]) == [(amount - entry_cut, amount, 2)]
        assert pool(chain) == (bonded - amount - bonded_cut + 500 * GNK, amount - entry_cut)
        blocks_to(chain, 14)
        assert chain.balance(operator(KEYS[0])) == balance
        chain.block()
        assert chain.balance(operator(KEYS[0])) == balance + amount - entry_cut
        assert chain.supply() == supply
        assert pool(chain) == (bonded - amount - bonded_cut + 500 * GNK, 0)


# --- power.py --------------------------------------------------------------------------------------------

A, B, C, D, E, F = (bytes([i]) * 20 for i in range(1, 7))


def test_power_cap_water_fills_exactly() -> None:
    """[10,10,10,10,10,1000] at 25%: the five small ones and the big one at c satisfy c = ¼(50 + c), so
    c = 50/3, rounded down 16; equal powers need no cap."""
    big = {A: 10, B: 10, C: 10, D: 10, E: 10, F: 1000}
    assert power.power_cap(big, Fraction(1, 4)) == 16
    assert power.power_cap({A: 10, B: 10, C: 10, D: 10}, Fraction(1, 4)) is None
    assert power.power_cap({A: 10, B: 10, C: 10, D: 10, E: 12}, Fraction(1, 4)) is None  # 12/52 < 1/4
    # two above the cap: [1,1,1,1,1,1,50,60] at 1/4: c = ¼(6 + 2c) -> c = 3
    assert (
        power.power_cap({A: 1, B: 1, C: 1, D: 1, E: 1, F: 1, b"\x07" * 20: 50, b"\x08" * 20: 60}, Fraction(1, 4)) == 3
    )


def test_effective_share_for_small_networks() -> None:
    """n · share ≤ 1 cannot hold every host under the share: 2/(n+2) instead."""
    quarter = Fraction(1, 4)
    assert [power.effective_share(quarter, n) for n in (2, 3, 4, 5, 10)] == [
        Fraction(1, 2),
        Fraction(2, 5),
        Fraction(1, 3),
        quarter,
        quarter,
    ]


def test_cap_powers_on_small_and_large_sets() -> None:
    quarter = Fraction(1, 4)
    assert power.cap_powers({A: 50}, quarter) == {A: 50}  # a set of one keeps its power
    assert power.cap_powers({A: 1000, B: 2000}, quarter) == {A: 1000, B: 1000}  # at most 1/2 each
    # three hosts, cap share 2/5: c = 2/5 (30 + c) -> c = 20
    assert power.cap_powers({A: 10, B: 20, C: 100}, quarter) == {A: 10, B: 20, C: 20}
    # four hosts, cap share 1/3: c = 1/3 (3 + c) -> c = 1.5, rounded down 1
    assert power.cap_powers({A: 1, B: 1, C: 1, D: 9}, quarter) == {A: 1, B: 1, C: 1, D: 1}
    capped = power.cap_powers({A: 10, B: 10, C: 10, D: 10, E: 10, F: 1000}, quarter)
    assert capped == {A: 10, B: 10, C: 10, D: 10, E: 10, F: 16}
    assert all(4 * p <= sum(capped.values()) for p in capped.values())


def test_backed_weight_counts_the_free_share_and_what_collateral_backs() -> None:
    share = Fraction(1, 5)
    assert power.backed_weight(100, 0, share, GNK) == 20  # only the free 20%
    assert power.backed_weight(100, 30 * GNK, share, GNK) == 50  # 20 free + 30 backed
    assert power.backed_weight(100, 30 * GNK - 1, share, GNK) == 49  # collateral rounds down
    assert power.backed_weight(100, 1_000 * GNK, share, GNK) == 100  # never more than the weight
    assert power.backed_weight(7, 0, share, GNK) == 1  # floor(1.4)
    assert power.backed_weight(7, 2 * GNK, Fraction(0), GNK) == 2


def test_select_validators_takes_the_largest_with_ties_to_the_lower_address() -> None:
    weights = {E: 5, B: 7, C: 5, D: 0, A: 5}
    assert power.select_validators(weights, 3) == {B: 7, A: 5, C: 5}
    assert power.select_validators(weights, 1) == {B: 7}
    assert power.select_validators(weights, 100) == {B: 7, A: 5, C: 5, E: 5}  # zero weight never selected


def test_validator_powers_combines_the_rules() -> None:
    """Backed (C has no collateral: 20% of 50 = 10), the top 3 selected (D's 9 is left out), then capped:
    three hosts may hold 2/5 each, so B's 100 becomes c = 2/5 (20 + c), c = 13⅓, rounded down 13."""
    weights = {A: 10, B: 100, C: 50, D: 9}
    held = {A: 10 * GNK, B: 100 * GNK, D: 9 * GNK}
    assert power.validator_powers(weights, held, Fraction(1, 5), GNK, 3, Fraction(1, 4)) == {A: 10, B: 13, C: 10}


def test_power_cap_holds_at_init_chain_with_one_large_host(tmp_path: Path) -> None:
    """Five hosts of 10 GNK and one of 1000: InitChain's powers are [10 ×5, 16] (cap = floor(¼·50/¾)),
    no host above a quarter of 66."""
    with host_chain(tmp_path / "db", [10 * GNK] * 5 + [1000 * GNK]) as chain:
        expected = {consensus_key(i): 10 for i in range(5)} | {consensus_key(5): 16}
        assert dict(updates(chain.init_chain_response)) == expected
        assert len(updates(chain.init_chain_response)) == 6
        total = sum(expected.values())
        assert total == 66 and all(4 * p <= total for p in expected.values())
        assert powers(chain) == {address_of(KEYS[i]): expected[consensus_key(i)] for i in range(6)}


# --- the validator set changes at the set-validators stage ------------------------------------------------


def test_a_deposit_changes_the_validator_set_only_at_the_set_validators_stage(tmp_path: Path) -> None:
    """Five hosts of 100 GNK; host 0 deposits 20 GNK at height 10 (epoch 1, after its stage at 9): nothing
    changes until epoch 2's set-validators stage at 15, which sends exactly one update, (host 0, 120)."""
    with host_chain(tmp_path / "db", [100 * GNK] * 5) as chain:
        assert dict(updates(chain.init_chain_response)) == {consensus_key(i): 100 for i in range(5)}
        blocks_to(chain, 9)
        result, response = deliver(chain, KEYS[0], deposit(KEYS[0], 20 * GNK))
        assert result.code == 0, result.log
        assert chain.height == 10 and updates(response) == []
        assert collateral(chain, KEYS[0]) == (120 * GNK, 0)
        for height in range(11, 15):
            assert updates(chain.block()) == [], height
            assert powers(chain)[address_of(KEYS[0])] == 100
        response = chain.block()
        assert chain.height == 15
        assert updates(response) == [(consensus_key(0), 120)]
        assert events(response, "set_validators") == [{"epoch": "2", "validators": "5", "total_power": "520"}]
        assert powers(chain)[address_of(KEYS[0])] == 120
        assert updates(chain.block()) == []


# --- bad input -------------------------------------------------------------------------------------------


def _refused(
    chain: InProcessChain, key: secp256k1.PrivateKey, msg: Message, codespace: str, code: int, fragment: str
) -> None:
    """``msg`` fails with (codespace, code) and ``fragment`` in its log; stake's state, the pools and the
    signer's balances are as before."""

    def snapshot() -> tuple[dict[bytes, bytes], int, int, int, int]:
        return (
            dict(chain.app.store.iterate(stake_keys.STORE_PREFIX)),
            chain.balance(operator(key)),
            chain.balance(operator(key), "uother"),
            chain.balance(module_address(stake_keys.BONDED_POOL)),
            chain.balance(module_address(stake_keys.UNBONDING_POOL)),
        )

    before = snapshot()
    result, response = deliver(chain, key, msg)
    assert (result.codespace, result.code) == (codespace, code), result.log
    assert fragment in result.log, result.log
    assert updates(response) == []
    assert snapshot() == before


def test_bad_input_is_refused_with_a_clear_error_and_changes_nothing(tmp_path: Path) -> None:
    """Default (day-long) epochs, so no block of this test is an epoch boundary that writes stake state."""
    with host_chain(tmp_path / "db", [100 * GNK, 100 * GNK], epochs=None) as chain:
        assert deliver(chain, KEYS[0], withdraw(KEYS[0], 30 * GNK))[0].code == 0  # 70 bonded, 30 unbonding
        _refused(
            chain,
            KEYS[0],
            withdraw(KEYS[0], 70 * GNK + 1),
            "stake",
            5,
            f"{address_of(KEYS[0])} has {70 * GNK}ngonka bonded, cannot withdraw {70 * GNK + 1}ngonka",
        )
        _refused(chain, KEYS[0], deposit(KEYS[0], 5, "uother"), "stake", 6, "collateral must be ngonka, got 'uother'")
        _refused(chain, KEYS[0], withdraw(KEYS[0], 5, "uother"), "stake", 6, "collateral must be ngonka, got 'uother'")
        _refused(
            chain,
            KEYS[0],
            create_validator(KEYS[0], consensus_key(7), 10 * GNK),
            "stake",
            2,
            f"{address_of(KEYS[0])} is already a host",
        )
        _refused(
            chain,
            KEYS[2],
            create_validator(KEYS[2], consensus_key(1), 10 * GNK),
            "stake",
            3,
            "another host signs with this consensus key",
        )
        _refused(
            chain, KEYS[2], deposit(KEYS[2], 10 * GNK), "stake", 4, f"{address_of(KEYS[2])} is not a registered host"
        )
        _refused(chain, KEYS[2], withdraw(KEYS[2], 1), "stake", 4, f"{address_of(KEYS[2])} is not a registered host")
        for build in (deposit, withdraw):
            _refused(chain, KEYS[0], build(KEYS[0], 0), "sdk", 10, "amount must be positive")
            _refused(chain, KEYS[0], build(KEYS[0], "-5"), "sdk", 10, "malformed amount '-5'")
            _refused(chain, KEYS[0], build(KEYS[0], "1e9"), "sdk", 10, "malformed amount '1e9'")
            _refused(chain, KEYS[0], build(KEYS[0], ""), "sdk", 10, "malformed amount ''")
        _refused(
            chain, KEYS[2], create_validator(KEYS[2], consensus_key(7), 0), "sdk", 10, "collateral must be positive"
        )
        _refused(
            chain,
            KEYS[2],
            create_validator(KEYS[2], consensus_key(7), GNK - 1),
            "sdk",
            10,
            "collateral below one unit of weight",
        )
        assert collateral(chain, KEYS[0]) == (70 * GNK, 30 * GNK)
        assert host(chain, KEYS[0]).collateral == str(70 * GNK)


# --- queries ---------------------------------------------------------------------------------------------


def test_queries_answer_what_state_holds(tmp_path: Path) -> None:
    """Three hosts (300, 200, 100 GNK). Three hosts may each hold at most 2/5 (effective_share): the largest
    is capped at c = 2/5 (300 + c), c = 200, so the powers are [200, 200, 100]. Every query agrees with the
    keeper's records; a jailed host shows as jailed and unbonded, out of the powers."""
    amounts = [300 * GNK, 200 * GNK, 100 * GNK]
    with host_chain(tmp_path / "db", amounts) as chain:
        expected_powers = {address_of(KEYS[0]): 200, address_of(KEYS[1]): 200, address_of(KEYS[2]): 100}
        assert powers(chain) == expected_powers
        stake = chain.app.stake_keeper
        ctx = chain.context()
        # Validators: every host, operator order, bonded, tokens its collateral
        reply = chain.query(
            COSMOS_QUERY + "Validators", cosmos_query.QueryValidatorsRequest(), cosmos_query.QueryValidatorsResponse
        )
        by_operator = sorted(range(3), key=lambda i: operator(KEYS[i]))
        assert [v.operator_address for v in reply.validators] == [valoper(KEYS[i]) for i in by_operator]
        assert [v.tokens for v in reply.validators] == [str(amounts[i]) for i in by_operator]
        # as many shares, a LegacyDec: value × 10^18 on the wire, as the SDK sends it
        assert [v.delegator_shares for v in reply.validators] == [str(amounts[i] * 10**18) for i in by_operator]
        assert all(v.status == staking_pb2.BOND_STATUS_BONDED and not v.jailed for v in reply.validators)
        assert [ed25519.PubKey.FromString(v.consensus_pubkey.value).key for v in reply.validators] == [
            consensus_key(i) for i in by_operator
        ]
        assert [v.description.moniker for v in reply.validators] == [f"host{i}" for i in by_operator]
        assert reply.validators == [stake.cosmos_validator(ctx, h) for h in stake.hosts(ctx)]
        page = chain.query(
            COSMOS_QUERY + "Validators",
            cosmos_query.QueryValidatorsRequest(pagination=pagination_pb2.PageRequest(limit=2)),
            cosmos_query.QueryValidatorsResponse,
        )
        assert [v.operator_address for v in page.validators] == [valoper(KEYS[i]) for i in by_operator[:2]]
        assert page.pagination.next_key == operator(KEYS[by_operator[2]])
        unbonded = chain.query(
            COSMOS_QUERY + "Validators",
            cosmos_query.QueryValidatorsRequest(status="BOND_STATUS_UNBONDED"),
            cosmos_query.QueryValidatorsResponse,
        )
        assert list(unbonded.validators) == []
        # Validator
        one = chain.query(
            COSMOS_QUERY + "Validator",
            cosmos_query.QueryValidatorRequest(validator_addr=valoper(KEYS[1])),
            cosmos_query.QueryValidatorResponse,
        ).validator
        assert (one.operator_address, one.tokens, one.status) == (
            valoper(KEYS[1]),
            str(200 * GNK),
            staking_pb2.BOND_STATUS_BONDED,
        )
        missing = chain.app.query(
            abci.RequestQuery(
                path=COSMOS_QUERY + "Validator",
                data=cosmos_query.QueryValidatorRequest(validator_addr=valoper(KEYS[5])).SerializeToString(),
            )
        )
        assert (missing.codespace, missing.code) == ("sdk", 38) and "not found" in missing.log
        # Params and Pool
        params = chain.query(
            COSMOS_QUERY + "Params", cosmos_query.QueryParamsRequest(), cosmos_query.QueryParamsResponse
        ).params
        assert (params.bond_denom, params.max_validators) == (DENOM, 100)
        assert pool(chain) == (600 * GNK, 0)
        assert pool(chain)[0] == chain.balance(module_address(stake_keys.BONDED_POOL))
        # Host, Hosts
        assert host(chain, KEYS[2]) == stake_pb2.Host(
            operator=address_of(KEYS[2]),
            consensus_pubkey=consensus_key(2),
            description=staking_pb2.Description(moniker="host2"),
            collateral=str(100 * GNK),
        )
        hosts = chain.query(STAKE_QUERY + "Hosts", query_pb2.QueryHostsRequest(), query_pb2.QueryHostsResponse)
        assert list(hosts.hosts) == stake.hosts(ctx) and len(hosts.hosts) == 3
        # EpochWeights: epoch 0's, collateral in GNK, recorded at InitChain; none for epoch 1 yet
        weights = chain.query(
            STAKE_QUERY + "EpochWeights",
            query_pb2.QueryEpochWeightsRequest(epoch=0),
            query_pb2.QueryEpochWeightsResponse,
        )
        assert weights.epoch == 0
        assert {w.operator: w.weight for w in weights.weights} == {
            address_of(KEYS[i]): a // GNK for i, a in enumerate(amounts)
        }
        none_yet = chain.app.query(
            abci.RequestQuery(
                path=STAKE_QUERY + "EpochWeights", data=query_pb2.QueryEpochWeightsRequest(epoch=1).SerializeToString()
            )
        )
        assert (none_yet.codespace, none_yet.code) == ("sdk", 38)
        # After epoch 1's set-validators stage (9) the weights are epoch 1's; a jailed host is unbonded
        blocks_to(chain, 9)
        weights = chain.query(
            STAKE_QUERY + "EpochWeights",
            query_pb2.QueryEpochWeightsRequest(epoch=1),
            query_pb2.QueryEpochWeightsResponse,
        )
        assert {w.operator: w.weight for w in weights.weights} == {
            address_of(KEYS[i]): a // GNK for i, a in enumerate(amounts)
        }
        app = chain.app
        response = chain.block(during=lambda c: app.stake_keeper.jail(c, operator(KEYS[2])))
        assert updates(response) == [(consensus_key(2), 0)]
        assert powers(chain) == {address_of(KEYS[0]): 200, address_of(KEYS[1]): 200}
        jailed = chain.query(
            COSMOS_QUERY + "Validator",
            cosmos_query.QueryValidatorRequest(validator_addr=valoper(KEYS[2])),
            cosmos_query.QueryValidatorResponse,
        ).validator
        assert (jailed.jailed, jailed.status) == (True, staking_pb2.BOND_STATUS_UNBONDED)
        assert host(chain, KEYS[2]).jailed


# --- CLI -------------------------------------------------------------------------------------------------


def test_cli_create_validator_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    """``gonkad tx stake create-validator`` reads the node's key files and the amount before it asks a keyring or
    a node: each bad input is one ``Error:`` line on stderr, exit code 1 (the localnet test sends a good one)."""
    import os
    import subprocess
    import sys

    def gonkad(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "GONKA_KEYRING_PASSPHRASE": "unused"}
        return subprocess.run(
            [sys.executable, "-m", "gonkad", *args], capture_output=True, text=True, timeout=60, env=env
        )

    home = tmp_path / "node"
    assert gonkad("init", "n0", "--chain-id", CHAIN, "--home", str(home)).returncode == 0
    flags = [
        "--moniker",
        "late",
        "--home",
        str(home),
        "--from",
        "op",
        "--keyring-backend",
        "test",
        "-y",
        "--node",
        "tcp://127.0.0.1:1",
    ]
    (home / "config" / "bls_key.json").unlink()
    cases = [
        (["1000ngonka", "--key-home", str(tmp_path / "none")], "priv_validator_key.json"),
        (["lots"], "malformed amount 'lots'"),
        (["1000ngonka"], f"{home / 'config' / 'bls_key.json'} does not exist; run `gonkad init` first"),
        (["1000ngonka", "--no-bls-key"], "key 'op' not found"),  # no BLS key wanted: on to the keyring
    ]
    for args, words in cases:
        result = gonkad("tx", "stake", "create-validator", *args, *flags)
        assert (result.returncode, result.stdout) == (1, ""), (args, result)
        assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1, (args, result.stderr)
        assert words in result.stderr, (args, result.stderr)
