"""Bank on a real 4-validator network: the CLI moves funds, 4 × 500 txs land exactly once, supply is exact; a
node's metrics agree with the chain after a send."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2
from cosmpy.protos.cosmos.bank.v1beta1 import tx_pb2 as bank_tx
from cosmpy.protos.cosmos.base.v1beta1 import coin_pb2
from cosmpy.protos.cosmos.staking.v1beta1 import tx_pb2 as staking_tx
from cosmpy.protos.cosmos.tx.v1beta1 import tx_pb2
from prometheus_client.parser import text_string_to_metric_families

from gonkad import localnet
from protogen.gonka.epochs.v1 import query_pb2 as epochs_query
from sdk.client.querier import Querier
from sdk.client.rpc import CometRPC, RPCError
from sdk.client.txbuilder import address_of, query_account, send_msg, sign_tx
from sdk.coins import Coins, parse_coins
from sdk.crypto import secp256k1
from sdk.services import cosmos
from sdk.tx import decode_tx, tx_hash
from x.genutil.gentx import build_gentx

BANK = cosmos("bank").query


def gonkad(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gonkad", *args], capture_output=True, text=True, timeout=60)


def balance(querier: Querier, address: str, height: int = 0) -> int:
    reply = querier.query(
        BANK + "Balance",
        query_pb2.QueryBalanceRequest(address=address, denom="ngonka"),
        query_pb2.QueryBalanceResponse,
        height,
    )
    return int(reply.balance.amount)


def supply(querier: Querier, height: int = 0) -> int:
    reply = querier.query(
        BANK + "TotalSupply", query_pb2.QueryTotalSupplyRequest(), query_pb2.QueryTotalSupplyResponse, height
    )
    return sum(int(c.amount) for c in reply.supply if c.denom == "ngonka")


def bank_events(rpc: CometRPC, first: int, last: int) -> list[tuple[str, dict[str, str]]]:
    """The bank's ``coinbase``, ``burn`` and ``transfer`` events of blocks ``first``..``last``: every tx's (a
    refused tx keeps its fee's) and each block's own (an epoch's rewards)."""
    found = []
    for height in range(first, last + 1):
        results = rpc.call("block_results", height=str(height))
        events = [e for r in results.get("txs_results") or [] for e in r.get("events") or []]
        for event in events + (results.get("finalize_block_events") or []):
            if event["type"] in ("coinbase", "burn", "transfer"):
                found.append((event["type"], {a["key"]: a["value"] for a in event.get("attributes") or []}))
    return found


def ngonka(coins: str) -> int:
    return dict(parse_coins(coins)).get("ngonka", 0)


def minted_less_burned(events: list[tuple[str, dict[str, str]]]) -> int:
    """What the supply moves by over ``events``, by the chain's own record of each mint and burn."""
    return sum(
        ngonka(a["amount"]) if kind == "coinbase" else -ngonka(a["amount"])
        for kind, a in events
        if kind in ("coinbase", "burn")
    )


def received(events: list[tuple[str, dict[str, str]]], address: str) -> int:
    return sum(ngonka(a["amount"]) for kind, a in events if kind == "transfer" and a["recipient"] == address)


def committed_everywhere(rpcs: list[CometRPC], height: int, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while any(rpc.height() < height for rpc in rpcs):
        assert time.monotonic() < deadline, f"not every node reached height {height}"
        time.sleep(0.2)


def wait_for_tx(rpc: CometRPC, txhash: bytes, timeout_s: float = 60) -> dict:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return rpc.tx(txhash)
        except Exception:  # noqa: BLE001 - not indexed yet
            assert time.monotonic() < deadline, f"tx {txhash.hex()} was not committed"
            time.sleep(0.3)


def decode_messages(raw: bytes) -> list[staking_tx.MsgCreateValidator]:
    return [staking_tx.MsgCreateValidator.FromString(m.value) for m in decode_tx(raw).messages]


def queriers(root: Path) -> list[Querier]:
    """Every node, queried over its own gRPC server."""
    return [Querier(n.rpc, grpc_addr=f"127.0.0.1:{n.grpc_port}") for n in localnet.load(root).nodes]


def test_cli_send_moves_funds_seen_by_every_node(net4: Path) -> None:
    nodes = localnet.load(net4).nodes
    recipient = address_of(secp256k1.PrivateKey(b"\x33" * 32))
    rpcs = [CometRPC(n.rpc) for n in nodes]
    first = rpcs[0].height()
    total_before = supply(queriers(net4)[0], first)
    sent = gonkad(
        "tx",
        "bank",
        "send",
        "val0",
        recipient,
        "1234ngonka",
        "--fees",
        "500ngonka",
        "--gas",
        "auto",
        "--gas-adjustment",
        "1.5",
        "--home",
        str(net4),
        "--keyring-backend",
        "test",
        "--node",
        nodes[0].rpc,
        "-y",
        "--output",
        "json",
    )
    assert sent.returncode == 0, sent.stderr
    reply = json.loads(sent.stdout)
    assert reply["code"] == 0, reply
    assert 40_000 < int(reply["gas_wanted"]) < 200_000  # simulated (~45k for a send) times 1.5
    committed = wait_for_tx(CometRPC(nodes[1].rpc), bytes.fromhex(reply["txhash"]))
    assert int(committed["tx_result"].get("code", 0)) == 0
    assert int(committed["tx_result"]["gas_used"]) <= int(reply["gas_wanted"])
    shown = gonkad("query", "tx", reply["txhash"], "--node", nodes[2].rpc, "--output", "json")
    assert shown.returncode == 0, shown.stderr
    event_types = {e["type"] for e in json.loads(shown.stdout)["events"]}
    assert {"tx", "message", "transfer"} <= event_types
    last = max(rpc.height() for rpc in rpcs)
    committed_everywhere(rpcs, last)
    moved = minted_less_burned(bank_events(rpcs[0], first + 1, last))  # an epoch's rewards, if one ended
    for querier in queriers(net4):
        assert balance(querier, recipient, last) == 1234
        assert supply(querier, last) == total_before + moved  # the fee moved to the fee collector, nothing lost
    cli = gonkad("query", "bank", "balances", recipient, "--node", nodes[3].rpc, "--output", "json")
    assert json.loads(cli.stdout)["balances"] == [{"denom": "ngonka", "amount": "1234"}]


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """A node's metrics: (sample name, its labels sorted) -> value."""
    text = httpx.get(url, timeout=10).raise_for_status().text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_metrics_agree_with_the_chain_after_a_send(net4: Path) -> None:
    status = json.loads(gonkad("localnet", "status", "--home", str(net4)).stdout)
    urls = [node["metrics"] for node in status["nodes"]]
    assert all(url and url.startswith("http://127.0.0.1:") for url in urls), urls
    node = localnet.load(net4).nodes[2]
    rpc, url = CometRPC(node.rpc), urls[2]
    before = scrape(url)
    key = localnet.load_key(net4, "val2")
    account = query_account(rpc, address_of(key))
    recipient = address_of(secp256k1.PrivateKey(b"\x36" * 32))
    raw = sign_tx(
        key,
        [send_msg(address_of(key), recipient, parse_coins("7ngonka"))],
        localnet.load(net4).chain_id,
        account.account_number,
        account.sequence,
        parse_coins("100ngonka"),
        100_000,
    )
    assert rpc.broadcast_tx_sync(raw)["code"] == 0
    height = int(wait_for_tx(rpc, tx_hash(raw))["height"])
    after = scrape(url)
    ok = ("gonkad_txs_total", (("code", "0"), ("codespace", "")))
    accepted = ("gonkad_check_tx_total", (("result", "accepted"), ("type", "new")))
    assert after[("gonkad_block_height", ())] >= height
    assert after[ok] >= before.get(ok, 0) + 1
    assert after[accepted] >= before.get(accepted, 0) + 1
    assert after[("gonkad_gas_used_total", ())] > before.get(("gonkad_gas_used_total", ()), 0)
    assert after[("gonkad_finalize_block_seconds_count", ())] >= after[("gonkad_blocks_total", ())] > 0

    read_at = int(after[("gonka_figures_height", ())])
    assert read_at >= height
    querier = Querier(node.rpc, grpc_addr=f"127.0.0.1:{node.grpc_port}")
    epoch = querier.query(
        "/gonka.epochs.v1.Query/CurrentEpoch",
        epochs_query.QueryCurrentEpochRequest(),
        epochs_query.QueryCurrentEpochResponse,
        height=read_at,
    )
    assert after[("gonka_epochs_epoch", ())] == epoch.epoch.number
    assert after[("gonka_epochs_stage", ())] == epoch.stage
    assert after[("gonka_stake_hosts", ())] == 4
    powers = [value for (name, _), value in after.items() if name == "gonka_stake_host_power"]
    assert len(powers) == 4 and sum(powers) == after[("gonka_stake_total_power", ())] > 0
    grpc_epoch = ("gonkad_query_seconds_count", (("method", "/gonka.epochs.v1.Query/CurrentEpoch"), ("server", "grpc")))
    assert scrape(url)[grpc_epoch] >= 1


@pytest.mark.parametrize(
    "args, words",
    [
        (["tx", "bank", "send", "val0", "gonka1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq", "1ngonka"], "invalid address"),
        (["tx", "bank", "send", "nobody", "ADDR", "1ngonka"], "nobody"),
        (["tx", "bank", "send", "val0", "ADDR", "12"], "malformed amount"),
        (
            ["tx", "bank", "send", "val0", "ADDR", "1ngonka", "--chain-id", "wrong-chain"],
            "signature verification failed",
        ),
        (["tx", "bank", "send", "val0", "ADDR", "999999999999999999999ngonka", "--gas", "auto"], "insufficient funds"),
        (["query", "bank", "balances", "gonka1notbech32"], "invalid address"),
        (["query", "bank", "balances", "ADDR", "--node", "tcp://127.0.0.1:9"], "unreachable"),
    ],
    ids=[
        "bad-checksum",
        "unknown-key",
        "malformed-amount",
        "wrong-chain-id",
        "insufficient-funds",
        "bad-query-address",
        "node-unreachable",
    ],
)
def test_invalid_cli_input_is_one_line(net4: Path, args: list[str], words: str) -> None:
    node = localnet.load(net4).nodes[0]
    recipient = address_of(secp256k1.PrivateKey(b"\x34" * 32))
    args = [recipient if a == "ADDR" else a for a in args]
    if args[0] == "tx":
        args += ["--home", str(net4), "--keyring-backend", "test", "-y", "--output", "json"]
    if "--node" not in args:
        args += ["--node", node.rpc]
    result = gonkad(*args)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    message = result.stderr.strip() or result.stdout
    assert words in message, message
    assert len(result.stderr.strip().splitlines()) <= 1, result.stderr


def test_four_senders_500_txs_each_included_exactly_once(net4: Path) -> None:
    nodes = localnet.load(net4).nodes
    spec = localnet.load(net4)
    rpcs = [CometRPC(n.rpc) for n in nodes]
    querier = queriers(net4)[0]
    senders = [localnet.load_key(net4, f"val{i}") for i in range(4)]
    recipients = [address_of(secp256k1.PrivateKey(bytes([0x40 + i]) * 32)) for i in range(4)]
    amount, fee, per_sender = 7, parse_coins("10ngonka"), 500
    start_height = rpcs[0].height()
    total_before = supply(querier, start_height)
    before = {address_of(k): balance(querier, address_of(k), start_height) for k in senders}
    hashes: set[bytes] = set()
    for i, key in enumerate(senders):
        account = query_account(rpcs[i], address_of(key))
        for n in range(per_sender):
            msg = send_msg(address_of(key), recipients[i], Coins((("ngonka", amount),)))
            raw = sign_tx(key, [msg], spec.chain_id, account.account_number, account.sequence + n, fee, 100_000)
            reply = rpcs[i].broadcast_tx_sync(raw)
            assert reply["code"] == 0, reply
            hashes.add(tx_hash(raw))
    assert len(hashes) == 4 * per_sender
    seen: dict[bytes, int] = {}
    height = start_height
    deadline = time.monotonic() + 180
    end_height: int | None = None
    while end_height is None or height < end_height:  # three blocks past the last one, to catch duplicates
        assert time.monotonic() < deadline, f"only {len(seen)} of {len(hashes)} txs were committed"
        if end_height is None and len(seen) == len(hashes):
            end_height = height + 3
        if rpcs[0].height() <= height:
            time.sleep(0.3)
            continue
        height += 1
        block = rpcs[0].block(height)["block"]
        results = rpcs[0].block_results(height)
        for raw_b64, result in zip(block["data"]["txs"] or [], results):
            h = tx_hash(base64.b64decode(raw_b64))
            if h in hashes:
                assert int(result.get("code", 0)) == 0, result
                seen[h] = seen.get(h, 0) + 1
    assert set(seen) == hashes and set(seen.values()) == {1}
    # The senders are validators: an epoch ending meanwhile pays them rewards, and mints; the chain's events say
    # how much, and nothing else may have moved.
    committed_everywhere(rpcs, height)
    events = bank_events(rpcs[0], start_height + 1, height)
    for q in queriers(net4):
        assert supply(q, height) == total_before + minted_less_burned(events)
        for i, key in enumerate(senders):
            sender = address_of(key)
            assert balance(q, recipients[i], height) == amount * per_sender
            spent = per_sender * (amount + 10)
            assert balance(q, sender, height) == before[sender] - spent + received(events, sender)


def test_invalid_txs_refused_by_the_network_which_keeps_going(net4: Path) -> None:
    node = localnet.load(net4).nodes[1]
    rpc = CometRPC(node.rpc)
    key = localnet.load_key(net4, "val1")
    sender, recipient = address_of(key), address_of(secp256k1.PrivateKey(b"\x35" * 32))
    account = query_account(rpc, sender)
    chain_id = localnet.load(net4).chain_id

    def send(chain: str = chain_id, number: int = account.account_number, sequence: int = account.sequence) -> bytes:
        return sign_tx(
            key,
            [send_msg(sender, recipient, parse_coins("5ngonka"))],
            chain,
            number,
            sequence,
            parse_coins("100ngonka"),
            100_000,
        )

    def resigned(raw: bytes, signature: bytes) -> bytes:
        tx = tx_pb2.TxRaw.FromString(raw)
        tx.signatures[0] = signature
        return tx.SerializeToString()

    good = send()
    assert rpc.broadcast_tx_sync(good)["code"] == 0
    wait_for_tx(rpc, tx_hash(good))
    signature = tx_pb2.TxRaw.FromString(send(sequence=account.sequence + 1)).signatures[0]
    high_s = signature[:32] + (secp256k1.ORDER - int.from_bytes(signature[32:], "big")).to_bytes(32, "big")
    before = balance(queriers(net4)[1], sender)
    height = rpc.height()
    with pytest.raises(RPCError, match="tx already exists in cache"):  # CometBFT's mempool cache sees replays first
        rpc.broadcast_tx_sync(good)
    bad = {
        "wrong chain id": (send(chain="other", sequence=account.sequence + 1), 4),
        "wrong account number": (send(number=account.account_number + 50, sequence=account.sequence + 1), 4),
        "bad signature": (resigned(send(sequence=account.sequence + 1), b"\x01" * 64), 4),
        "high-S signature": (resigned(send(sequence=account.sequence + 1), high_s), 4),
        "malformed protobuf": (b"\x0a\xff\xff\xff", 2),
        "gas limit over int64": (
            sign_tx(
                key,
                [send_msg(sender, recipient, parse_coins("5ngonka"))],
                chain_id,
                account.account_number,
                account.sequence + 1,
                parse_coins("100ngonka"),
                1 << 63,
            ),
            18,
        ),
        "full-width digits": (
            sign_tx(
                key,
                [
                    bank_tx.MsgSend(
                        from_address=sender,
                        to_address=recipient,
                        amount=[coin_pb2.Coin(denom="ngonka", amount="\uff15")],
                    )
                ],
                chain_id,
                account.account_number,
                account.sequence + 1,
                parse_coins("100ngonka"),
                100_000,
            ),
            10,
        ),
    }
    for name, (raw, code) in bad.items():
        reply = rpc.broadcast_tx_sync(raw)
        assert (reply["code"], reply["codespace"]) == (code, "sdk"), (name, reply)
        assert reply["log"], name
    localnet.wait_for_height(net4, height + 2, timeout_s=60)
    assert balance(queriers(net4)[1], sender) == before
    assert balance(queriers(net4)[1], recipient) == 5
    # The refusals left this node's mempool state as it was: the next sequence is still the one it takes.
    following = send(sequence=account.sequence + 1)
    reply = rpc.broadcast_tx_sync(following)
    assert reply["code"] == 0, reply
    wait_for_tx(rpc, tx_hash(following))
    assert balance(queriers(net4)[1], recipient) == 10


def test_create_validator_after_genesis_joins_the_validator_set(net4: Path) -> None:
    """Last in this module: the new validator never runs a node, so it gets 1 GNK of power only. It joins at
    the next set-validators stage of x/epochs (CometBFT runs the set two heights after it is sent)."""
    node = localnet.load(net4).nodes[0]
    rpc = CometRPC(node.rpc)
    key = secp256k1.PrivateKey(b"\x36" * 32)
    faucet = localnet.load_key(net4, "faucet")
    chain_id = localnet.load(net4).chain_id
    funding = query_account(rpc, address_of(faucet))
    fund = sign_tx(
        faucet,
        [send_msg(address_of(faucet), address_of(key), parse_coins("2000000000ngonka"))],
        chain_id,
        funding.account_number,
        funding.sequence,
        parse_coins("100ngonka"),
        100_000,
    )
    assert rpc.broadcast_tx_sync(fund)["code"] == 0
    wait_for_tx(rpc, tx_hash(fund))
    account = query_account(rpc, address_of(key))
    consensus_key = bytes(range(32))
    raw = build_gentx(key, "late", consensus_key, ("ngonka", 10**9), chain_id)  # the same message, now as a normal tx
    raw = sign_tx(
        key,
        list(decode_messages(raw)),
        chain_id,
        account.account_number,
        account.sequence,
        parse_coins("100ngonka"),
        400_000,
    )
    assert rpc.broadcast_tx_sync(raw)["code"] == 0
    committed = wait_for_tx(rpc, tx_hash(raw))
    assert int(committed["tx_result"].get("code", 0)) == 0, committed["tx_result"]
    height = int(committed["height"])
    epoch = Querier(node.rpc).query(
        "/gonka.epochs.v1.Query/CurrentEpoch",
        epochs_query.QueryCurrentEpochRequest(),
        epochs_query.QueryCurrentEpochResponse,
    )
    this_epochs = epoch.epoch.start_height + epoch.epoch.params.set_validators_offset
    set_height = (
        this_epochs
        if epoch.epoch.number > 0 and this_epochs > height
        else (epoch.next_epoch_height + epoch.epoch.params.set_validators_offset)
    )  # the schedule is not changed here
    localnet.wait_for_height(net4, set_height + 3, timeout_s=120)
    keys = {
        h: {v["pub_key"]["value"] for v in rpc.call("validators", height=str(h))["validators"]}
        for h in (set_height + 1, set_height + 2)
    }
    late = base64.b64encode(consensus_key).decode()
    assert late not in keys[set_height + 1] and late in keys[set_height + 2]
    powers = sorted(int(v["voting_power"]) for v in rpc.call("validators", height=str(set_height + 2))["validators"])
    assert powers == [1, 100_000, 100_000, 100_000, 100_000]
