"""x/pool in process: the community pool funded by MsgFundCommunityPool (anyone) and by modules
(``fund_from_module``), spent only by the authority (MsgCommunityPoolSpend; anyone else ``gov/13``), slash
remainders landing in it, its queries (Cosmos ``CommunityPool`` and Gonka's totals), its params, genesis
export and import, and the invariant ``pool/balance-accounted`` (checked after every block)."""

from __future__ import annotations

from pathlib import Path

import pytest
from chain import InProcessChain
from cosmpy.protos.cosmos.distribution.v1beta1 import query_pb2 as distribution_query
from cosmpy.protos.cosmos.distribution.v1beta1 import tx_pb2 as distribution_tx
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from google.protobuf.message import Message

from protogen.gonka.pool.v1 import pool_pb2, query_pb2, tx_pb2
from sdk.address import module_address
from sdk.client.txbuilder import address_of, sign_tx
from sdk.coins import Coins
from sdk.crypto import bech32, secp256k1
from sdk.services import gonka
from x.pool import keys as pool_keys
from x.pool.module import PoolModule

CHAIN = "gonka-pool"
DENOM = "ngonka"
AUTHORITY, ALICE, BOB = (secp256k1.PrivateKey(bytes([0x90 + i]) * 32) for i in range(3))
FUNDS = 10**13
POOL = module_address(pool_keys.POOL_ACCOUNT)
QUERY = gonka("pool").query


def coins(*pairs: tuple[int, str]) -> list[dict[str, str]]:
    return [{"denom": d, "amount": str(a)} for a, d in pairs]


class PoolChain(InProcessChain):
    """AUTHORITY, ALICE, BOB funded (ngonka and uother); AUTHORITY's address is the chain's authority."""

    def __init__(self, path: Path, **kwargs: object) -> None:
        funded = {address_of(k): [(DENOM, FUNDS), ("uother", 10**6)] for k in (AUTHORITY, ALICE, BOB)}
        super().__init__(path, funded, chain_id=CHAIN, authority=bech32.decode(address_of(AUTHORITY)), **kwargs)  # type: ignore[arg-type]

    def deliver(
        self, key: secp256k1.PrivateKey, *msgs: Message
    ) -> tuple[abci.ExecTxResult, abci.ResponseFinalizeBlock]:
        account = self.account(address_of(key))
        assert account is not None
        raw = sign_tx(key, list(msgs), CHAIN, account.account_number, account.sequence, gas_limit=2_000_000)
        block = self.block([raw])
        return block.tx_results[0], block

    def pool(self, denom: str = DENOM) -> int:
        return self.balance(POOL, denom)

    def totals(self) -> query_pb2.QueryTotalsResponse:
        return self.query(QUERY + "Totals", query_pb2.QueryTotalsRequest(), query_pb2.QueryTotalsResponse)


def fund(key: secp256k1.PrivateKey, *pairs: tuple[int, str]) -> distribution_tx.MsgFundCommunityPool:
    return distribution_tx.MsgFundCommunityPool(depositor=address_of(key), amount=coins(*pairs))


def spend(authority: str, recipient: str, *pairs: tuple[int, str]) -> distribution_tx.MsgCommunityPoolSpend:
    return distribution_tx.MsgCommunityPoolSpend(authority=authority, recipient=recipient, amount=coins(*pairs))


def test_fund_by_message_and_module_spend_only_by_the_authority(tmp_path: Path) -> None:
    with PoolChain(tmp_path / "db") as chain:
        alice, bob = address_of(ALICE), address_of(BOB)
        # anyone funds: exact balances, counted under "fund"
        result, response = chain.deliver(ALICE, fund(ALICE, (1_234_567, DENOM), (7, "uother")))
        assert result.code == 0, result.log
        assert chain.pool() == 1_234_567 and chain.pool("uother") == 7
        assert chain.balance(alice) == FUNDS - 1_234_567 and chain.balance(alice, "uother") == 10**6 - 7
        # more than the depositor has: sdk/5, nothing moves
        result, _ = chain.deliver(BOB, fund(BOB, (FUNDS + 1, DENOM)))
        assert (result.codespace, result.code) == ("sdk", 5), result.log
        assert chain.pool() == 1_234_567 and chain.balance(bob) == FUNDS
        # empty amount: refused before execution
        result, _ = chain.deliver(BOB, distribution_tx.MsgFundCommunityPool(depositor=bob))
        assert (result.codespace, result.code) == ("sdk", 10), result.log
        # a module pays in (as x/gov's burned deposits will): from its module account, under its source
        app = chain.app

        def from_module(ctx):  # type: ignore[no-untyped-def]
            app.bank_keeper.send_coins(ctx, bech32.decode(bob), module_address("fee_collector"), Coins(((DENOM, 500),)))
            app.pool_keeper.fund_from_module(ctx, "fee_collector", Coins(((DENOM, 500),)), "deposit")

        chain.block(during=from_module)
        assert chain.pool() == 1_235_067 and chain.balance(bob) == FUNDS - 500
        # bob may not spend: gov/13, nothing moves
        before = chain.pool()
        result, _ = chain.deliver(BOB, spend(bob, bob, (1, DENOM)))
        assert (result.codespace, result.code) == ("gov", 13), result.log
        assert f"expected {address_of(AUTHORITY)}, got {bob}" in result.log
        assert chain.pool() == before and chain.balance(bob) == FUNDS - 500
        # the authority spends exactly; more than the pool holds is sdk/5
        result, response = chain.deliver(AUTHORITY, spend(address_of(AUTHORITY), bob, (1_000_000, DENOM)))
        assert result.code == 0, result.log
        assert chain.pool() == 235_067 and chain.balance(bob) == FUNDS - 500 + 1_000_000
        result, _ = chain.deliver(AUTHORITY, spend(address_of(AUTHORITY), bob, (235_068, DENOM)))
        assert (result.codespace, result.code) == ("sdk", 5), result.log
        # a module account may not be paid from the pool
        result, _ = chain.deliver(
            AUTHORITY, spend(address_of(AUTHORITY), bech32.encode(module_address("rewards")), (1, DENOM))
        )
        assert (result.codespace, result.code) == ("sdk", 4), result.log
        # nor funded by MsgSend: the pool's account is blocked for bank sends
        from cosmpy.protos.cosmos.bank.v1beta1 import tx_pb2 as bank_tx

        result, _ = chain.deliver(
            ALICE, bank_tx.MsgSend(from_address=alice, to_address=bech32.encode(POOL), amount=coins((1, DENOM)))
        )
        assert (result.codespace, result.code) == ("sdk", 4), result.log
        # the queries: Cosmos' DecCoins (LegacyDec on the wire: × 10^18) and Gonka's totals
        reply = chain.query(
            "/cosmos.distribution.v1beta1.Query/CommunityPool",
            distribution_query.QueryCommunityPoolRequest(),
            distribution_query.QueryCommunityPoolResponse,
        )
        assert [(c.denom, c.amount) for c in reply.pool] == [
            (DENOM, str(235_067 * 10**18)),
            ("uother", str(7 * 10**18)),
        ]
        totals = chain.totals()
        assert [(c.denom, c.amount) for c in totals.balance] == [(DENOM, "235067"), ("uother", "7")]
        assert {t.source: [(c.denom, c.amount) for c in t.amount] for t in totals.inflows} == {
            "deposit": [(DENOM, "500")],
            "fund": [(DENOM, "1234567"), ("uother", "7")],
        }
        assert [(c.denom, c.amount) for c in totals.spent] == [(DENOM, "1000000")]


def test_params_only_by_the_authority_and_deposits_to_pool(tmp_path: Path) -> None:
    with PoolChain(tmp_path / "db") as chain:
        app = chain.app
        assert app.pool_keeper.deposits_to_pool(chain.context()) is True
        off = pool_pb2.Params(burned_deposits_to_pool=False)
        result, _ = chain.deliver(BOB, tx_pb2.MsgUpdateParams(authority=address_of(BOB), params=off))
        assert (result.codespace, result.code) == ("gov", 13), result.log
        assert app.pool_keeper.deposits_to_pool(chain.context()) is True
        result, _ = chain.deliver(AUTHORITY, tx_pb2.MsgUpdateParams(authority=address_of(AUTHORITY), params=off))
        assert result.code == 0, result.log
        assert app.pool_keeper.deposits_to_pool(chain.context()) is False  # stored False, not read as absent
        reply = chain.query(QUERY + "Params", query_pb2.QueryParamsRequest(), query_pb2.QueryParamsResponse)
        assert reply.params.burned_deposits_to_pool is False


def test_slash_remainder_lands_in_the_pool_exactly(tmp_path: Path) -> None:
    """Uses x/stake's host chain: a slash of 1/7 with beneficiaries 2 : 5 leaves 1 ngonka of rounding, which
    the pool receives under source "slash"; with no beneficiaries it receives all; the supply never moves."""
    from fractions import Fraction

    from test_stake import GNK, KEYS, host_chain, operator

    with host_chain(tmp_path / "db", [100 * GNK, 100 * GNK]) as chain:
        x, y = operator(KEYS[5]), operator(KEYS[6])
        supply = chain.supply()
        app = chain.app
        chain.block(
            during=lambda ctx: app.slashing_keeper.slash(ctx, operator(KEYS[1]), Fraction(1, 7), "t", [(x, 2), (y, 5)])
        )
        assert chain.balance(POOL) == 1  # 14_285_714_285 − 4_081_632_652 − 10_204_081_632
        chain.block(during=lambda ctx: app.slashing_keeper.slash(ctx, operator(KEYS[0]), Fraction(1, 4), "t", ()))
        assert chain.balance(POOL) == 1 + 25 * GNK
        assert chain.supply() == supply
        totals = chain.query(QUERY + "Totals", query_pb2.QueryTotalsRequest(), query_pb2.QueryTotalsResponse)
        assert [(t.source, t.amount[0].amount) for t in totals.inflows] == [("slash", str(1 + 25 * GNK))]


def test_genesis_round_trip_and_a_bad_genesis_is_refused(tmp_path: Path) -> None:
    with PoolChain(tmp_path / "a") as chain:
        chain.deliver(ALICE, fund(ALICE, (999, DENOM)))
        chain.deliver(AUTHORITY, spend(address_of(AUTHORITY), address_of(BOB), (99, DENOM)))
        exported = PoolModule(chain.app.pool_keeper).export_genesis(chain.context())
        assert exported["inflows"] == [{"source": "fund", "amount": [{"denom": DENOM, "amount": "999"}]}]
        assert exported["spent"] == [{"denom": DENOM, "amount": "99"}]
        assert exported["params"] == {"burned_deposits_to_pool": True}
    from gonkad import genesis

    state = genesis.default_app_state()
    state["pool"] = exported
    with pytest.raises(ValueError, match="community pool holds 0ngonka but inflows − spends = 900ngonka"):
        InProcessChain(tmp_path / "b", {}, app_state=state)
    state["bank"]["balances"].append({"address": bech32.encode(POOL), "coins": coins((900, DENOM))})
    with InProcessChain(tmp_path / "c", {}, app_state=state) as chain:
        assert chain.balance(POOL) == 900
        assert PoolModule(chain.app.pool_keeper).export_genesis(chain.context()) == exported
