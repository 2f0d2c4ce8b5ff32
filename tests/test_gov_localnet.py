"""x/gov on a real 4-validator network (power 100,000 each), every action by the ``gonkad`` CLI.

Short periods (70 s of voting: room for four votes from each validator, one after another, each a CLI process
and a commit, on a small busy machine) and epochs of 20 blocks; x/pool told to leave burns burned (so a burn is
a burn). Five proposals run side by side to keep the file short: (A) the epoch length 20 → 30, yes from
val0..val3: passes, and the next epoch runs 30 blocks; (B) vetoed by val2 and val3: its deposit is burned; (C)
one yes of four, no quorum: rejected, its deposit burned (``burn_vote_quorum``); (D) an epochs change then a
MsgSend the authority cannot pay, yes from val0..val2: FAILED, nothing of it applies, its deposit refunded; (E)
a community pool spend, yes from val1..val3: pays exactly the amount; (F) a text proposal (no messages), yes from
val0 and val3: passes, executes nothing, and the ``cosmos.gov.v1beta1`` query shows it as a ``TextProposal``.
After them, a proposal cancelled by its proposer (``tx gov cancel-proposal``; refused to another validator):
half its deposit refunded, half burned.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from cosmpy.protos.cosmos.gov.v1beta1 import gov_pb2 as legacy
from cosmpy.protos.cosmos.gov.v1beta1 import query_pb2 as legacy_query
from nodes import running_localnet

from gonkad import genesis, localnet
from sdk.address import module_address
from sdk.client.rpc import CometRPC, RPCError
from sdk.client.txbuilder import address_of
from sdk.crypto import bech32
from sdk.params import GOV_AUTHORITY

DENOM = "ngonka"
DEPOSIT = 10 * 10**9
VOTING_S = 70
"""The voting period: every vote below (each validator casts at most four, one CLI call and one commit after
another) must land inside it, counted from the first proposal's submission; on the 2-core machine all of them
took 20-25 s alone when val0 cast five, up to 53 s beside another localnet. The fixture waits for all of it, so
it is no longer than that needs."""
OVERRIDES = {
    "epochs": {
        "params": {
            "epoch_length": "20",
            "race_validation_offset": "4",
            "set_validators_offset": "8",
            "inference_offset": "9",
        }
    },
    "gov": {
        "params": {
            "min_deposit": [{"denom": DENOM, "amount": str(DEPOSIT)}],
            "max_deposit_period": "30s",
            "voting_period": f"{VOTING_S}s",
            "burn_vote_quorum": True,
            "burn_vote_veto": True,
        }
    },
    "pool": {"params": {"burned_deposits_to_pool": False}},
}
_base = localnet.load_settings(validators=4, chain_id="gonka-gov")
SETTINGS = _base.model_copy(update={"genesis": genesis.merge_overrides(_base.genesis, OVERRIDES)})
AUTHORITY = bech32.encode(GOV_AUTHORITY)
DEPOSITS_ACCOUNT = bech32.encode(module_address("gov_deposits"))  # holds the deposits, apart from the authority
NEW_EPOCHS = {
    "epoch_length": "30",
    "race_validation_offset": "4",
    "set_validators_offset": "8",
    "inference_offset": "9",
}
OTHER_EPOCHS = {**NEW_EPOCHS, "epoch_length": "25"}
SPEND = 1_234_567_891
RECIPIENT = bech32.encode(bytes(range(20)))
POOL_FUNDING = 5 * 10**9


def gonkad(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gonkad", *args], capture_output=True, text=True, timeout=60)


class Net:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.node = localnet.load(root).nodes[0].rpc
        self.rpc = CometRPC(self.node)

    def query(self, *args: str) -> dict[str, Any]:
        shown = gonkad("query", *args, "--node", self.node, "--output", "json")
        assert shown.returncode == 0, shown.stderr
        return json.loads(shown.stdout)

    def tx(self, *args: str, key: str, code: int = 0) -> dict[str, Any]:
        """Broadcast by the CLI and wait until committed; the committed tx result (with its height)."""
        sent = gonkad(
            "tx",
            *args,
            "--from",
            key,
            "--home",
            str(self.root),
            "--keyring-backend",
            "test",
            "--node",
            self.node,
            "--gas",
            "2000000",
            "-y",
            "--output",
            "json",
        )
        assert sent.returncode == 0, sent.stdout + sent.stderr
        txhash = json.loads(sent.stdout)["txhash"]
        deadline = time.monotonic() + 30
        while True:
            try:
                committed = self.rpc.tx(bytes.fromhex(txhash))
                break
            except RPCError:
                assert time.monotonic() < deadline, f"{args} not committed in 30s"
                time.sleep(0.15)
        result = committed["tx_result"]
        assert int(result.get("code", 0)) == code, result
        return {**result, "height": int(committed["height"])}

    def balance(self, address: str) -> int:
        balances = self.query("bank", "balances", address).get("balances", [])
        return sum(int(c["amount"]) for c in balances if c["denom"] == DENOM)

    def proposal(self, pid: int) -> dict[str, Any]:
        return self.query("gov", "proposal", str(pid))["proposal"]

    def events(self, height: int, kind: str) -> list[dict[str, str]]:
        events = self.rpc.call("block_results", height=str(height))["finalize_block_events"] or []
        return [{a["key"]: a["value"] for a in e["attributes"]} for e in events if e["type"] == kind]


def write_proposal(root: Path, name: str, messages: list[dict[str, Any]]) -> str:
    path = root / f"{name}.json"
    path.write_text(
        json.dumps(
            {
                "messages": messages,
                "metadata": "",
                "deposit": f"{DEPOSIT}{DENOM}",
                "title": f"proposal {name}",
                "summary": f"localnet test {name}",
            }
        )
    )
    return str(path)


def epochs_update(params: dict[str, str]) -> dict[str, Any]:
    return {"@type": "/gonka.epochs.v1.MsgUpdateParams", "authority": AUTHORITY, "params": params}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The network, the pool funded, the five proposals submitted (A..E by val0..val3 and the faucet) and voted
    on (the faucet's vote, refused, alongside the validators'), and the wait until all are tallied."""
    for root in running_localnet(tmp_path_factory.mktemp("gov"), SETTINGS):
        net = Net(root)
        addresses = {
            name: address_of(localnet.load_key(root, name)) for name in ("val0", "val1", "val2", "val3", "faucet")
        }
        files = {
            "A": write_proposal(root, "A", [epochs_update(NEW_EPOCHS)]),
            "B": write_proposal(root, "B", [epochs_update(OTHER_EPOCHS)]),
            "C": write_proposal(root, "C", [epochs_update(OTHER_EPOCHS)]),
            "D": write_proposal(
                root,
                "D",
                [
                    epochs_update(OTHER_EPOCHS),
                    {
                        "@type": "/cosmos.bank.v1beta1.MsgSend",
                        "from_address": AUTHORITY,
                        "to_address": RECIPIENT,
                        "amount": [{"denom": DENOM, "amount": str(10**30)}],
                    },
                ],
            ),
            "E": write_proposal(
                root,
                "E",
                [
                    {
                        "@type": "/cosmos.distribution.v1beta1.MsgCommunityPoolSpend",
                        "authority": AUTHORITY,
                        "recipient": RECIPIENT,
                        "amount": [{"denom": DENOM, "amount": str(SPEND)}],
                    }
                ],
            ),
            "F": write_proposal(root, "F", []),
        }
        proposers = {"A": "val0", "B": "val1", "C": "val2", "D": "val3", "E": "faucet", "F": "val3"}
        net.tx("pool", "fund", f"{POOL_FUNDING}{DENOM}", key="faucet")  # before any voting period starts

        def submit(key: str) -> list[tuple[str, int, int]]:
            """``key``'s proposals, one after another (one account's txs go in sequence)."""
            done = []
            for name in (n for n, proposer in proposers.items() if proposer == key):
                result = net.tx("gov", "submit-proposal", files[name], key=key)
                found = [e for e in result["events"] if e["type"] == "submit_proposal"]
                attributes = {a["key"]: a["value"] for a in found[0]["attributes"]}
                done.append((name, int(attributes["proposal_id"]), result["height"]))
            return done

        submitting = time.monotonic()
        with ThreadPoolExecutor(5) as pool:
            submitted = [one for done in pool.map(submit, sorted(set(proposers.values()))) for one in done]
        ids = {name: pid for name, pid, _ in submitted}
        first_height = min(h for _, _, h in submitted)
        voting = net.query("gov", "proposals", "--status", "voting_period")["proposals"]  # one CLI call, not five
        assert sorted(int(p["id"]) for p in voting) == sorted(ids.values()), voting

        votes = {  # each validator's votes, in order: at most five each, the longest wait inside the period
            "val0": [("A", "yes"), ("B", "yes"), ("C", "yes"), ("D", "yes"), ("F", "yes")],
            "val1": [("A", "yes"), ("B", "yes"), ("D", "yes"), ("E", "yes")],
            "val2": [("A", "yes"), ("B", "no_with_veto"), ("D", "yes"), ("E", "yes")],
            "val3": [("A", "yes"), ("B", "no_with_veto"), ("E", "yes"), ("F", "yes")],
        }

        refused: dict[str, Any] = {}

        def cast(key: str) -> None:
            if key == "faucet":  # a non-validator's vote is refused with gov/100 (in the block: CheckTx runs no
                refused.update(net.tx("gov", "vote", str(ids["A"]), "yes", key=key, code=100))  # message handler)
                return
            for name, option in votes[key]:
                net.tx("gov", "vote", str(ids[name]), option, key=key)

        with ThreadPoolExecutor(5) as pool:
            list(pool.map(cast, [*votes, "faucet"]))
        assert refused["codespace"] == "gov" and "holds no power in the validator set" in refused["log"], refused
        voted_s = time.monotonic() - submitting
        print(f"proposals submitted and every vote committed in {voted_s:.1f}s of the {VOTING_S}s voting period")
        # the tally so far, while B is still being voted on (its end is VOTING_S after its submission)
        assert net.proposal(ids["B"])["status"] == "PROPOSAL_STATUS_VOTING_PERIOD", (
            f"B's voting ended before its live tally was read ({voted_s:.1f}s after the submissions)"
        )
        live = net.query("gov", "tally", str(ids["B"]))["tally"]
        assert live == {"yes_count": "200000", "abstain_count": "0", "no_count": "0", "no_with_veto_count": "200000"}

        deadline = time.monotonic() + VOTING_S + 30
        while net.query("gov", "proposals", "--status", "voting_period").get("proposals"):  # only A..E exist
            assert time.monotonic() < deadline, "proposals not tallied in time"
            time.sleep(0.5)
        yield {"net": net, "ids": ids, "addresses": addresses, "proposers": proposers, "first_height": first_height}


def tallied_at(net: Net, pid: int, start: int) -> tuple[int, dict[str, str]]:
    """The height whose end block tallied proposal ``pid``, and its ``active_proposal`` event."""
    for height in range(start, net.rpc.height() + 1):
        for event in net.events(height, "active_proposal"):
            if event["proposal_id"] == str(pid):
                return height, event
    raise AssertionError(f"proposal {pid} was never tallied")


def refund_in(net: Net, height: int, proposer: str) -> bool:
    """Whether block ``height`` paid the deposit back from the deposits account to ``proposer`` (validators'
    balances also move with rewards, so the transfer itself is the evidence)."""
    return {"recipient": proposer, "sender": DEPOSITS_ACCOUNT, "amount": f"{DEPOSIT}{DENOM}"} in net.events(
        height, "transfer"
    )


def test_epoch_length_proposal_passes_and_the_next_epoch_uses_it(run: dict[str, Any]) -> None:
    net: Net = run["net"]
    pid = run["ids"]["A"]
    proposal = net.proposal(pid)
    assert proposal["status"] == "PROPOSAL_STATUS_PASSED", proposal
    assert proposal["final_tally_result"]["yes_count"] == "400000"
    assert {k: str(v) for k, v in net.query("epochs", "params")["params"].items()} == NEW_EPOCHS
    height, event = tallied_at(net, pid, run["first_height"])
    assert event["proposal_result"] == "proposal_passed" and event["deposits"] == "refunded"
    current = net.query("epochs", "current")
    passed_in = current["epoch"]
    deadline = time.monotonic() + 60
    while int(current["epoch"].get("number", 0)) == int(passed_in.get("number", 0)):
        assert time.monotonic() < deadline, "no new epoch within 60 s"
        time.sleep(0.5)
        current = net.query("epochs", "current")
    assert str(current["epoch"]["params"]["epoch_length"]) == "30", current
    assert int(current["next_epoch_height"]) - int(current["epoch"]["start_height"]) == 30
    assert refund_in(net, height, run["addresses"]["val0"])


@pytest.mark.parametrize("name, reason", [("B", "vetoed"), ("C", "quorum not reached")])
def test_vetoed_and_quorumless_proposals_burn_their_deposit(run: dict[str, Any], name: str, reason: str) -> None:
    net: Net = run["net"]
    pid = run["ids"][name]
    proposal = net.proposal(pid)
    assert proposal["status"] == "PROPOSAL_STATUS_REJECTED", proposal
    height, event = tallied_at(net, pid, run["first_height"])
    assert event["tally"] == reason and event["deposits"] == "burned", event
    burns = [e for e in net.events(height, "burn") if e["burner"] == DEPOSITS_ACCOUNT]
    assert {"burner": DEPOSITS_ACCOUNT, "amount": f"{DEPOSIT}{DENOM}"} in burns, burns
    assert not refund_in(net, height, run["addresses"][run["proposers"][name]])
    deposits = net.query("gov", "deposits", str(pid)).get("deposits", [])
    assert deposits == []


def test_failing_second_message_changes_nothing(run: dict[str, Any]) -> None:
    net: Net = run["net"]
    pid = run["ids"]["D"]
    proposal = net.proposal(pid)
    assert proposal["status"] == "PROPOSAL_STATUS_FAILED", proposal
    assert "message 1 (/cosmos.bank.v1beta1.MsgSend)" in proposal["failed_reason"]
    assert str(net.query("epochs", "params")["params"]["epoch_length"]) == "30"  # A's, not D's 25
    height, event = tallied_at(net, pid, run["first_height"])
    assert event["proposal_result"] == "proposal_failed" and event["deposits"] == "refunded"
    assert refund_in(net, height, run["addresses"]["val3"])


def test_pool_spend_pays_exactly_the_amount(run: dict[str, Any]) -> None:
    net: Net = run["net"]
    proposal = net.proposal(run["ids"]["E"])
    assert proposal["status"] == "PROPOSAL_STATUS_PASSED", proposal
    assert net.balance(RECIPIENT) == SPEND
    assert net.balance(bech32.encode(GOV_AUTHORITY)) == 0


def test_cli_lists_and_refuses_a_malformed_file(run: dict[str, Any], tmp_path: Path) -> None:
    net: Net = run["net"]
    listed = net.query("gov", "proposals", "--status", "passed")
    assert sorted(int(p["id"]) for p in listed["proposals"]) == sorted(run["ids"][n] for n in "AEF")
    bad = tmp_path / "bad.json"
    bad.write_text('{"messages": [{"authority": "x"}], "deposit": "1ngonka"}')
    refused = gonkad(
        "tx",
        "gov",
        "submit-proposal",
        str(bad),
        "--from",
        "val0",
        "--home",
        str(net.root),
        "--keyring-backend",
        "test",
        "--node",
        net.node,
        "-y",
    )
    assert refused.returncode == 1 and refused.stderr.startswith("Error: ") and refused.stderr.count("\n") == 1, (
        refused.stderr
    )


def test_text_proposal_passes_and_the_v1beta1_query_shows_it(run: dict[str, Any]) -> None:
    net: Net = run["net"]
    pid = run["ids"]["F"]
    proposal = net.proposal(pid)
    assert proposal["status"] == "PROPOSAL_STATUS_PASSED" and proposal.get("messages", []) == [], proposal
    assert proposal["final_tally_result"]["yes_count"] == "200000"
    height, event = tallied_at(net, pid, run["first_height"])
    assert event["proposal_result"] == "proposal_passed" and event["deposits"] == "refunded", event
    reply = net.rpc.abci_query(
        "/cosmos.gov.v1beta1.Query/Proposal", legacy_query.QueryProposalRequest(proposal_id=pid).SerializeToString()
    )
    assert int(reply.get("code", 0)) == 0, reply
    shown = legacy_query.QueryProposalResponse.FromString(reply["value"]).proposal
    assert shown.status == legacy.PROPOSAL_STATUS_PASSED
    assert shown.content.type_url == "/cosmos.gov.v1beta1.TextProposal"
    assert legacy.TextProposal.FromString(shown.content.value) == legacy.TextProposal(
        title="proposal F", description="localnet test F"
    )


def test_proposal_cancelled_by_its_proposer(run: dict[str, Any]) -> None:
    net: Net = run["net"]
    path = write_proposal(net.root, "G", [])
    submitted = net.tx("gov", "submit-proposal", path, key="val1")
    found = [e for e in submitted["events"] if e["type"] == "submit_proposal"]
    pid = {a["key"]: a["value"] for a in found[0]["attributes"]}["proposal_id"]
    refused = net.tx("gov", "cancel-proposal", pid, key="val2", code=18)
    assert refused["codespace"] == "gov", refused
    cancelled = net.tx("gov", "cancel-proposal", pid, key="val1")
    half = f"{DEPOSIT // 2}{DENOM}"
    expected = {
        "cancel_proposal": {"proposal_id": pid, "proposer": run["addresses"]["val1"], "charged": half},
        "burn": {"burner": DEPOSITS_ACCOUNT, "amount": half},
        "transfer": {"recipient": run["addresses"]["val1"], "sender": DEPOSITS_ACCOUNT, "amount": half},
    }
    for kind, wanted in expected.items():
        seen = [{a["key"]: a["value"] for a in e["attributes"]} for e in cancelled["events"] if e["type"] == kind]
        assert any(wanted.items() <= one.items() for one in seen), (kind, seen)
    gone = gonkad("query", "gov", "proposal", pid, "--node", net.node, "--output", "json")
    assert gone.returncode != 0 and "doesn't exist" in gone.stdout + gone.stderr, gone
