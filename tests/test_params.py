"""Params with an authority, on an in-process chain whose authority is a test key (no governance yet).

For each module (auth, bank, stake, learning, consensus): ``MsgUpdateParams`` from any other signer is
refused with ``gov/13`` and changes nothing; from the authority it is applied and ``Query/Params`` answers
the new values; invalid params are refused (``sdk/18``) even from the authority. Then the economy rules of
bank: mint and burn only by a module account with the permission, ``send_enabled``, locked coins.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from chain import InProcessChain
from cosmpy.protos.cosmos.auth.v1beta1 import auth_pb2
from cosmpy.protos.cosmos.auth.v1beta1 import query_pb2 as auth_query
from cosmpy.protos.cosmos.auth.v1beta1 import tx_pb2 as auth_tx
from cosmpy.protos.cosmos.bank.v1beta1 import bank_pb2
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2 as bank_query
from cosmpy.protos.cosmos.bank.v1beta1 import tx_pb2 as bank_tx
from cosmpy.protos.cosmos.consensus.v1 import query_pb2 as consensus_query
from cosmpy.protos.cosmos.consensus.v1 import tx_pb2 as consensus_tx
from cosmpy.protos.cosmos.crypto.ed25519 import keys_pb2 as ed25519
from cosmpy.protos.cosmos.staking.v1beta1 import staking_pb2
from cosmpy.protos.cosmos.staking.v1beta1 import tx_pb2 as staking_tx
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from cosmpy.protos.tendermint.types import params_pb2
from google.protobuf.message import Message

from app import MODULE_ACCOUNT_PERMISSIONS
from protogen.gonka.learning.v1 import query_pb2 as learning_query
from protogen.gonka.learning.v1 import tx_pb2 as learning_tx
from protogen.gonka.stake.v1 import query_pb2 as stake_query
from protogen.gonka.stake.v1 import tx_pb2 as stake_tx
from sdk.client.txbuilder import address_of, sign_tx
from sdk.coins import Coins
from sdk.context import BlockHeader, Context
from sdk.crypto import bech32, secp256k1
from sdk.errors import ABCIError, ErrInsufficientFunds, ErrInvalidRequest, ErrUnauthorized, ErrUnknownAddress
from sdk.params import GOV_AUTHORITY, ErrInvalidSigner
from sdk.store.cachekv import CacheKV
from x.auth import keys as auth_keys
from x.auth.keeper import AccountKeeper
from x.bank.errors import ErrSendDisabled
from x.bank.keeper import BankKeeper
from x.gov import keys as gov_keys
from x.learning import params as learning_params
from x.stake import keys as stake_keys
from x.stake.params import default_params

CHAIN = "gonka-params"
AUTHORITY, OUTSIDER, ALICE = (secp256k1.PrivateKey(bytes([0x70 + i]) * 32) for i in range(3))
DENOM = "ngonka"


class ParamsChain(InProcessChain):
    """Every key funded; ``AUTHORITY``'s address is the chain's authority."""

    def __init__(self, path: Path) -> None:
        funded = {address_of(key): [(DENOM, 10**13), ("uother", 10**6)] for key in (AUTHORITY, OUTSIDER, ALICE)}
        super().__init__(path, funded, chain_id=CHAIN, authority=bech32.decode(address_of(AUTHORITY)))

    def deliver(
        self, key: secp256k1.PrivateKey, *msgs: Message
    ) -> tuple[abci.ExecTxResult, abci.ResponseFinalizeBlock]:
        account = self.account(address_of(key))
        assert account is not None
        raw = sign_tx(key, list(msgs), CHAIN, account.account_number, account.sequence, gas_limit=2_000_000)
        block = self.block([raw])
        return block.tx_results[0], block

    def prefix_state(self, prefix: bytes, signer: secp256k1.PrivateKey) -> dict[bytes, bytes]:
        """The state under ``prefix``, less the signer's account (the ante handler bumps its sequence)."""
        skip = auth_keys.STORE_PREFIX + auth_keys.account_key(bech32.decode(address_of(signer)))
        return {k: v for k, v in self.app.store.iterate(prefix) if k != skip}


@dataclass(frozen=True)
class Case:
    """One module's MsgUpdateParams: how to build it, where its state lives, how to read its params."""

    name: str
    prefix: bytes
    update: Callable[[str, bool], Message]  # (authority, valid) -> message
    read: Callable[[ParamsChain], Message]
    expect: Callable[[Message], bool]


def _auth_update(authority: str, valid: bool) -> Message:
    params = auth_pb2.Params(
        max_memo_characters=512,
        tx_sig_limit=7 if valid else 0,
        tx_size_cost_per_byte=10,
        sig_verify_cost_ed25519=590,
        sig_verify_cost_secp256k1=1000,
    )
    return auth_tx.MsgUpdateParams(authority=authority, params=params)


def _bank_update(authority: str, valid: bool) -> Message:
    entries = [bank_pb2.SendEnabled(denom="uother", enabled=False)]
    if not valid:
        entries.append(bank_pb2.SendEnabled(denom="uother", enabled=True))
    return bank_tx.MsgUpdateParams(
        authority=authority, params=bank_pb2.Params(default_send_enabled=True, send_enabled=entries)
    )


def _stake_update(authority: str, valid: bool) -> Message:
    params = default_params()
    params.power_reduction, params.max_moniker_length = (10**6 if valid else 0), 5
    return stake_tx.MsgUpdateParams(authority=authority, params=params)


def _learning_update(authority: str, valid: bool) -> Message:
    params = learning_params.default_params()
    params.max_workers, params.max_rounds, params.max_reason_len = 8, 0 if not valid else 99, 32
    return learning_tx.MsgUpdateParams(authority=authority, params=params)


def _consensus_update(authority: str, valid: bool) -> Message:
    return consensus_tx.MsgUpdateParams(
        authority=authority,
        block=params_pb2.BlockParams(max_bytes=2_000_000 if valid else 0, max_gas=50_000_000),
        evidence=params_pb2.EvidenceParams(
            max_age_num_blocks=100_000, max_age_duration={"seconds": 172_800}, max_bytes=1_048_576
        ),
        validator=params_pb2.ValidatorParams(pub_key_types=["ed25519"]),
    )


def _query(path: str, request: Message, reply: type[Message]) -> Callable[[ParamsChain], Message]:
    return lambda chain: chain.query(path, request, reply).params  # type: ignore[attr-defined,no-any-return]


CASES = [
    Case(
        "auth",
        auth_keys.STORE_PREFIX,
        _auth_update,
        _query("/cosmos.auth.v1beta1.Query/Params", auth_query.QueryParamsRequest(), auth_query.QueryParamsResponse),
        lambda p: p.max_memo_characters == 512,
    ),  # type: ignore[attr-defined]
    Case(
        "bank",
        b"bank/",
        _bank_update,
        _query("/cosmos.bank.v1beta1.Query/Params", bank_query.QueryParamsRequest(), bank_query.QueryParamsResponse),
        lambda p: [(e.denom, e.enabled) for e in p.send_enabled] == [("uother", False)],
    ),  # type: ignore[attr-defined]
    Case(
        "stake",
        stake_keys.STORE_PREFIX,
        _stake_update,
        _query("/gonka.stake.v1.Query/Params", stake_query.QueryParamsRequest(), stake_query.QueryParamsResponse),
        lambda p: p.power_reduction == 10**6 and p.max_moniker_length == 5,
    ),  # type: ignore[attr-defined]
    Case(
        "learning",
        b"learning/",
        _learning_update,
        _query(
            "/gonka.learning.v1.Query/Params", learning_query.QueryParamsRequest(), learning_query.QueryParamsResponse
        ),
        lambda p: p.max_rounds == 99,
    ),  # type: ignore[attr-defined]
    Case(
        "consensus",
        b"baseapp/consensus_params",
        _consensus_update,
        _query(
            "/cosmos.consensus.v1.Query/Params",
            consensus_query.QueryParamsRequest(),
            consensus_query.QueryParamsResponse,
        ),
        lambda p: p.block.max_bytes == 2_000_000 and p.block.max_gas == 50_000_000,
    ),  # type: ignore[attr-defined]
]


@pytest.fixture
def chain(tmp_path: Path) -> ParamsChain:
    with ParamsChain(tmp_path / "chain") as c:
        yield c  # type: ignore[misc]


def _first_block_has_params(chain: ParamsChain, case: Case) -> Message | None:
    try:
        return case.read(chain)
    except AssertionError:  # consensus: the in-process InitChain gives none
        return None


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_update_params_from_another_signer_is_refused_and_changes_nothing(chain: ParamsChain, case: Case) -> None:
    before_state = chain.prefix_state(case.prefix, OUTSIDER)
    before_params = _first_block_has_params(chain, case)
    alice = chain.balance(address_of(ALICE))
    result, block = chain.deliver(OUTSIDER, case.update(address_of(OUTSIDER), True))
    assert (result.codespace, result.code) == (ErrInvalidSigner.codespace, ErrInvalidSigner.code), result.log
    assert f"invalid authority; expected {address_of(AUTHORITY)}, got {address_of(OUTSIDER)}" in result.log
    assert chain.prefix_state(case.prefix, OUTSIDER) == before_state
    assert _first_block_has_params(chain, case) == before_params
    assert chain.balance(address_of(ALICE)) == alice
    assert not block.HasField("consensus_param_updates")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_update_params_naming_the_authority_must_be_signed_by_it(chain: ParamsChain, case: Case) -> None:
    """Naming the authority without its key fails the signature checks: the authority field is the signer."""
    before_state = chain.prefix_state(case.prefix, OUTSIDER)
    result, _ = chain.deliver(OUTSIDER, case.update(address_of(AUTHORITY), True))
    assert (result.codespace, result.code) == ("sdk", 8), result.log  # the signing key is not the authority's
    assert chain.prefix_state(case.prefix, OUTSIDER) == before_state


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_update_params_from_the_authority_is_applied(chain: ParamsChain, case: Case) -> None:
    result, _ = chain.deliver(AUTHORITY, case.update(address_of(AUTHORITY), True))
    assert result.code == 0, result.log
    assert case.expect(case.read(chain))
    chain.reopen()  # stored, not held in memory
    assert case.expect(case.read(chain))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_invalid_params_are_refused_even_from_the_authority(chain: ParamsChain, case: Case) -> None:
    before_state = chain.prefix_state(case.prefix, AUTHORITY)
    result, _ = chain.deliver(AUTHORITY, case.update(address_of(AUTHORITY), False))
    assert (result.codespace, result.code) == (ErrInvalidRequest.codespace, ErrInvalidRequest.code), result.log
    assert "invalid params" in result.log
    assert chain.prefix_state(case.prefix, AUTHORITY) == before_state


@pytest.mark.parametrize("field, text", [("free_weight_share", "0.5\n"), ("bond_denom", "ngonka\n")])
def test_param_text_with_a_trailing_newline_is_refused(chain: ParamsChain, field: str, text: str) -> None:
    """A decimal or a denom is the whole text: Python's ``$`` would let one more newline through into state."""
    params = default_params()
    setattr(params, field, text)
    before_state = chain.prefix_state(stake_keys.STORE_PREFIX, AUTHORITY)
    result, _ = chain.deliver(AUTHORITY, stake_tx.MsgUpdateParams(authority=address_of(AUTHORITY), params=params))
    assert (result.codespace, result.code) == (ErrInvalidRequest.codespace, ErrInvalidRequest.code), result.log
    assert repr(text) in result.log and "invalid params" in result.log
    assert chain.prefix_state(stake_keys.STORE_PREFIX, AUTHORITY) == before_state


def test_the_default_authority_is_the_gov_module_account() -> None:
    assert bech32.encode(GOV_AUTHORITY) == bech32.encode(auth_keys.module_address("gov"))
    assert bech32.encode(GOV_AUTHORITY).startswith("gonka1")


def test_consensus_update_reaches_finalize_block(chain: ParamsChain) -> None:
    result, block = chain.deliver(AUTHORITY, _consensus_update(address_of(AUTHORITY), True))
    assert result.code == 0, result.log
    update = block.consensus_param_updates
    assert (update.block.max_bytes, update.block.max_gas) == (2_000_000, 50_000_000)
    assert list(update.validator.pub_key_types) == ["ed25519"]
    assert not chain.block().HasField("consensus_param_updates")  # only the block that changed them


def test_consensus_update_needs_every_section(chain: ParamsChain) -> None:
    msg = _consensus_update(address_of(AUTHORITY), True)
    msg.ClearField("evidence")
    result, block = chain.deliver(AUTHORITY, msg)
    assert (result.codespace, result.code) == (ErrInvalidRequest.codespace, ErrInvalidRequest.code)
    assert "all parameters must be present" in result.log
    assert not block.HasField("consensus_param_updates")


def _validator(operator: secp256k1.PrivateKey, moniker: str, amount: int) -> staking_tx.MsgCreateValidator:
    msg = staking_tx.MsgCreateValidator(
        validator_address=bech32.encode(bech32.decode(address_of(operator)), bech32.VALOPER_PREFIX),
        description=staking_pb2.Description(moniker=moniker),
        value={"denom": DENOM, "amount": str(amount)},
    )
    msg.pubkey.Pack(ed25519.PubKey(key=bytes([7]) * 32), type_url_prefix="/")
    return msg


def test_stake_reads_its_rules_from_the_params(chain: ParamsChain) -> None:
    """After the update a 6-letter moniker is too long and 10^6 ngonka is one unit of weight (the new host's
    power comes at the next set-validators stage, x/stake README)."""
    assert chain.deliver(AUTHORITY, _stake_update(address_of(AUTHORITY), True))[0].code == 0
    result, _ = chain.deliver(ALICE, _validator(ALICE, "sixsix", 10**6))
    assert (result.codespace, result.code) == (ErrInvalidRequest.codespace, ErrInvalidRequest.code)
    assert "moniker must be 1 to 5 characters" in result.log
    result, block = chain.deliver(ALICE, _validator(ALICE, "alice", 3 * 10**6))
    assert result.code == 0, result.log
    assert list(block.validator_updates) == []
    assert chain.app.stake_keeper.collateral_weights(_context(chain)) == {bech32.decode(address_of(ALICE)): 3}


# --- bank: module account permissions, send_enabled, locked coins -----------------------------------------


def _context(chain: ParamsChain) -> Context:
    return Context(CacheKV(chain.app.store), BlockHeader(CHAIN, chain.height, 0))


def test_mint_and_burn_need_the_permission(chain: ParamsChain) -> None:
    bank, ctx = chain.app.bank_keeper, _context(chain)
    supply = bank.get_supply(ctx, DENOM)
    with pytest.raises(ABCIError) as refused:
        bank.mint_coins(ctx, auth_keys.FEE_COLLECTOR, Coins(((DENOM, 5),)))
    assert refused.value.kind == ErrUnauthorized
    assert "module account fee_collector does not have permissions to mint tokens" in refused.value.log
    with pytest.raises(ABCIError) as refused:
        bank.burn_coins(ctx, auth_keys.FEE_COLLECTOR, Coins(((DENOM, 5),)))
    assert refused.value.kind == ErrUnauthorized
    with pytest.raises(ABCIError) as refused:
        bank.mint_coins(ctx, "nobody", Coins(((DENOM, 5),)))
    assert refused.value.kind == ErrUnknownAddress
    assert bank.get_supply(ctx, DENOM) == supply
    assert ctx.store.changes() == {}  # type: ignore[attr-defined]


def test_burning_reduces_the_supply(chain: ParamsChain) -> None:
    """The gov account may burn (lost proposal deposits): coins leave its balance and the supply."""
    bank, ctx = chain.app.bank_keeper, _context(chain)
    pool = auth_keys.module_address(gov_keys.MODULE_NAME)
    bank.send_coins(ctx, bech32.decode(address_of(ALICE)), pool, Coins(((DENOM, 100),)))
    supply = bank.get_supply(ctx, DENOM)
    bank.burn_coins(ctx, gov_keys.MODULE_NAME, Coins(((DENOM, 40),)))
    assert bank.get_balance(ctx, pool, DENOM) == 60
    assert bank.get_supply(ctx, DENOM) == supply - 40
    with pytest.raises(ABCIError) as short:
        bank.burn_coins(ctx, gov_keys.MODULE_NAME, Coins(((DENOM, 61),)))
    assert short.value.kind == ErrInsufficientFunds
    assert chain.app.invariants["bank/total-supply"](ctx) is None


def test_a_minter_mints_into_its_own_account(chain: ParamsChain) -> None:
    accounts = AccountKeeper({**MODULE_ACCOUNT_PERMISSIONS, "mint": (auth_keys.MINTER,)})
    bank, ctx = BankKeeper(accounts), _context(chain)
    supply = bank.get_supply(ctx, DENOM)
    bank.mint_coins(ctx, "mint", Coins(((DENOM, 7),)))
    assert bank.get_balance(ctx, auth_keys.module_address("mint"), DENOM) == 7
    assert bank.get_supply(ctx, DENOM) == supply + 7
    assert chain.app.invariants["bank/total-supply"](ctx) is None


def _send(amount: int, denom: str = DENOM) -> bank_tx.MsgSend:
    return bank_tx.MsgSend(
        from_address=address_of(ALICE),
        to_address=address_of(OUTSIDER),
        amount=[{"denom": denom, "amount": str(amount)}],
    )


def _multi_send(amount: int, denom: str = DENOM) -> bank_tx.MsgMultiSend:
    coins = [{"denom": denom, "amount": str(amount)}]
    return bank_tx.MsgMultiSend(
        inputs=[{"address": address_of(ALICE), "coins": coins}],
        outputs=[{"address": address_of(OUTSIDER), "coins": coins}],
    )


def _set_send_enabled(chain: ParamsChain, default: bool, **per_denom: bool) -> None:
    entries = [bank_pb2.SendEnabled(denom=d, enabled=e) for d, e in sorted(per_denom.items())]
    msg = bank_tx.MsgUpdateParams(
        authority=address_of(AUTHORITY), params=bank_pb2.Params(default_send_enabled=default, send_enabled=entries)
    )
    assert chain.deliver(AUTHORITY, msg)[0].code == 0


@pytest.mark.parametrize("build", [_send, _multi_send], ids=["send", "multi-send"])
def test_send_enabled_false_blocks_sends(chain: ParamsChain, build: Callable[..., Message]) -> None:
    _set_send_enabled(chain, True, uother=False)
    before = chain.balance(address_of(OUTSIDER), "uother")
    result, _ = chain.deliver(ALICE, build(5, "uother"))
    assert (result.codespace, result.code) == (ErrSendDisabled.codespace, ErrSendDisabled.code), result.log
    assert result.log == "uother transfers are currently disabled: send transactions are disabled"
    assert chain.balance(address_of(OUTSIDER), "uother") == before
    assert chain.deliver(ALICE, build(5))[0].code == 0  # ngonka: the default, enabled

    _set_send_enabled(chain, False, ngonka=True)
    assert chain.deliver(ALICE, build(5))[0].code == 0  # its own entry overrides the default
    assert chain.deliver(ALICE, build(5, "uother"))[0].code == ErrSendDisabled.code


def test_locked_coins_are_not_spendable(chain: ParamsChain) -> None:
    alice = bech32.decode(address_of(ALICE))
    balance = chain.balance(alice)
    locked = balance - 1_000
    chain.app.bank_keeper.locked_coins = None  # the app wires x/vesting's hook; this test installs its own
    chain.app.bank_keeper.set_locked_coins_hook(
        lambda ctx, address: Coins(((DENOM, locked),)) if address == alice else Coins()
    )
    reply = chain.query(
        "/cosmos.bank.v1beta1.Query/SpendableBalanceByDenom",
        bank_query.QuerySpendableBalanceByDenomRequest(address=address_of(ALICE), denom=DENOM),
        bank_query.QuerySpendableBalanceByDenomResponse,
    )
    assert int(reply.balance.amount) == 1_000
    result, _ = chain.deliver(ALICE, _send(1_001))
    assert (result.codespace, result.code) == (ErrInsufficientFunds.codespace, ErrInsufficientFunds.code)
    assert chain.deliver(ALICE, _send(500))[0].code == 0
    with pytest.raises(ValueError):
        chain.app.bank_keeper.set_locked_coins_hook(lambda ctx, address: Coins())


def test_cli_builds_update_params_from_a_json_file() -> None:
    """``gonkad tx <module> update-params PARAMS.json``: the params under ``params``, or x/consensus's own
    fields; a file that does not fit the message is a TxError naming it."""
    from sdk.cli.params import update_params_message
    from sdk.client.tx import TxError

    authority = address_of(AUTHORITY)
    msg = update_params_message(bank_tx.MsgUpdateParams, authority, {"default_send_enabled": False})
    assert msg == bank_tx.MsgUpdateParams(authority=authority, params=bank_pb2.Params(default_send_enabled=False))
    msg = update_params_message(
        consensus_tx.MsgUpdateParams, authority, {"block": {"max_bytes": "100", "max_gas": "-1"}}
    )
    assert (msg.authority, msg.block.max_bytes, msg.block.max_gas) == (authority, 100, -1)  # type: ignore[attr-defined]
    with pytest.raises(TxError, match="gonka.stake.v1.MsgUpdateParams"):
        update_params_message(stake_tx.MsgUpdateParams, authority, {"no_such_field": 1})


def test_consensus_update_keeps_the_version_out() -> None:
    """The app version is not the authority's: a stored version stays, and CometBFT is never sent one."""
    from sdk.baseapp import changed_consensus_params

    before = params_pb2.ConsensusParams(version=params_pb2.VersionParams(app=0))
    after = params_pb2.ConsensusParams(
        version=params_pb2.VersionParams(app=0), block=params_pb2.BlockParams(max_bytes=9)
    )
    update = changed_consensus_params(before, after)
    assert update is not None and not update.HasField("version") and update.block.max_bytes == 9
    assert changed_consensus_params(after, after) is None


def test_export_writes_the_updated_consensus_params(chain: ParamsChain) -> None:
    """``gonkad export`` writes the consensus params the state holds, over the node genesis file's."""
    from gonkad import genesis
    from sdk.baseapp import stored_consensus_params

    assert chain.deliver(AUTHORITY, _consensus_update(address_of(AUTHORITY), True))[0].code == 0
    node = {
        "genesis_time": "2026-01-02T03:04:05Z",
        "consensus_params": {"block": {"max_bytes": "22020096", "max_gas": "-1"}, "version": {"app": "0"}},
    }
    doc = genesis.exported_genesis(node, CHAIN, chain.height, {}, stored_consensus_params(CacheKV(chain.app.store)))
    assert doc["consensus_params"] == {
        "block": {"max_bytes": "2000000", "max_gas": "50000000"},
        "evidence": {"max_age_num_blocks": "100000", "max_age_duration": "172800000000000", "max_bytes": "1048576"},
        "validator": {"pub_key_types": ["ed25519"]},
        "version": {"app": "0"},
    }
