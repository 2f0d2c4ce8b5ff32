"""The epoch's proof block (issue #25, deliverable 4), driven in process as CometBFT drives it: every height's
votes carry real BLS shares, every block the certificate of the last height. At an epoch's end x/sprint writes
the summary (per host: weight, work root, inferences, tokens; totals) and the next height's votes sign its hash
(x/bls extras); when x/stake changes the validator set, the outgoing set's last height signs the incoming set.
A light client (x/sprint/client/epochproof.py) walks from the genesis set to an inference's leaf, with blst and
with py_ecc, and refuses a tampered summary, another host's work root, a forged certificate and a set that did
not sign its successor.

Epochs of 8 blocks: epoch 0 is heights 1-8; epoch 1 starts at 9 (summary of epoch 0 written at 9, signed by the
votes of 10), its set-validators stage is 13 (host 0 deposited in epoch 0, so its power grows: the handoff is
recorded at 13, in force at 15, signed by the votes of 14); epoch 2 starts at 17 (summary of epoch 1, signed at
18, certified in block 19). Five hosts of 1,000 GNK, each with a BLS key.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from chain import InProcessChain, Reply
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from google.protobuf.message import Message
from py_ecc.bls import G2ProofOfPossession
from test_bls_consensus import ACCEPT, ADDRESSES, COMMIT, GNK, KEYS, SECRETS, make_chain
from test_stake import deposit, signed

from gonkad.cli import build_parser
from gonkad.cmd import verify_work as verify_work_cmd
from protogen.gonka.bls.v1 import bls_pb2
from protogen.gonka.bls.v1 import query_pb2 as bls_query
from protogen.gonka.inference.v1 import inference_pb2
from protogen.gonka.inference.v1 import query_pb2 as inference_query
from protogen.gonka.sprint.v1 import query_pb2, sprint_pb2
from sdk.abci.blocks import encode_vote_extension
from sdk.address import consensus_address
from sdk.cli.flags import message_dict
from sdk.client.rpc import RPCError
from sdk.client.txbuilder import address_of
from sdk.context import Context
from sdk.crypto import bech32, bls, certificate, merkle
from sdk.services import gonka
from x.inference import work
from x.sprint import types
from x.sprint.client.epochproof import LightClient, ProofError

EPOCHS = {"epoch_length": "8", "race_validation_offset": "2", "set_validators_offset": "4", "inference_offset": "5"}
HOSTS = 5
SECRET_OF = {ADDRESSES[i]: SECRETS[i] for i in range(HOSTS)}
INFERENCES = {0: 3, 2: 5}
"""Host index -> how many inferences it finishes in epoch 1."""


class Network:
    """The validators of a chain, voting each height with their BLS shares as CometBFT would: the set in force
    follows the validator updates (a block's updates take effect two heights later)."""

    def __init__(self, chain: InProcessChain) -> None:
        self.chain = chain
        genesis = {consensus_address(v.pub_key.ed25519): v.power for v in chain.init_chain_response.validators}
        self.sets: dict[int, dict[bytes, int]] = {1: genesis, 2: genesis}

    def set_at(self, height: int) -> dict[bytes, int]:
        return self.sets[max(h for h in self.sets if h <= height)]

    def step(
        self, txs: list[bytes] | None = None, during: Callable[[Context], None] | None = None
    ) -> abci.ResponseFinalizeBlock:
        """The next block, carrying the certificate of the last height, signed by every validator of it."""
        chain, height = self.chain, self.chain.height
        ctx = chain.context()
        app_hash = chain.init_chain_response.app_hash if height == 1 else chain.app.store.root_at(height - 1)
        message = chain.app.bls_keeper.signing_message(ctx, height, app_hash)
        members = sorted(self.set_at(height).items(), key=lambda item: (-item[1], item[0]))
        extended, plain = abci.ExtendedCommitInfo(), abci.CommitInfo()
        for address, power in members:
            share = bls.sign(SECRET_OF[address], message)
            validator = abci.Validator(address=address, power=power)
            ext = encode_vote_extension({"bls": share})
            extended.votes.append(abci.ExtendedVoteInfo(validator=validator, vote_extension=ext, block_id_flag=COMMIT))
            plain.votes.append(abci.VoteInfo(validator=validator, block_id_flag=COMMIT))
        proposal = list(
            chain.app.prepare_proposal(
                abci.RequestPrepareProposal(
                    height=height + 1, max_tx_bytes=1 << 20, local_last_commit=extended, proposer_address=ADDRESSES[0]
                )
            ).txs
        )
        proposal += txs or []
        status = chain.app.process_proposal(
            abci.RequestProcessProposal(
                height=height + 1, txs=proposal, proposed_last_commit=plain, proposer_address=ADDRESSES[0]
            )
        ).status
        assert status == ACCEPT, height + 1
        response = (
            chain.block(proposal, last_commit=plain, during=during)
            if during
            else chain.block(proposal, last_commit=plain)
        )
        if response.validator_updates:
            updated = dict(self.set_at(height + 1))
            for update in response.validator_updates:
                address = consensus_address(update.pub_key.ed25519)
                if update.power:
                    updated[address] = update.power
                else:
                    updated.pop(address, None)
            self.sets[height + 3] = updated
        return response

    def run_to(self, height: int) -> None:
        while self.chain.height < height:
            self.step()


def inference_id(host: int, n: int) -> bytes:
    return hashlib.sha256(f"inference {host} {n}".encode()).digest()


@pytest.fixture(scope="module")
def proven(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessChain]:
    """A chain run to height 20: epoch 1 has ended, its summary is certified, one handoff happened."""
    path = tmp_path_factory.mktemp("epochproof") / "db"
    chain = make_chain(path, keyed=HOSTS, overrides={"epochs": {"params": EPOCHS}})
    network = Network(chain)
    network.run_to(4)
    network.step([signed(chain, KEYS[0], deposit(KEYS[0], 500 * GNK))])
    network.run_to(10)
    keeper = chain.app.inference_keeper

    def finish(ctx: Context) -> None:
        for host, count in INFERENCES.items():
            executor = address_of(KEYS[host])
            record = work.epoch_work_of(keeper, ctx, 1, executor)
            for n in range(count):
                inference = inference_pb2.Inference(
                    id=inference_id(host, n),
                    executor=executor,
                    requester=address_of(KEYS[HOSTS]),
                    ta=address_of(KEYS[HOSTS]),
                    start_height=ctx.header.height,
                    prune_height=10_000,
                    status=inference_pb2.STATUS_FINISHED,
                    response_hash=hashlib.sha256(b"response %d" % n).digest(),
                    prompt_tokens=10 + n,
                    completion_tokens=20 + n,
                    finish_height=ctx.header.height,
                    epoch=1,
                    work_index=record.count,
                )
                keeper.set_inference(ctx, inference)
                work.add_leaf(keeper, ctx, record, inference, 30 + 2 * n)

    network.step(during=finish)
    network.run_to(20)
    yield chain
    chain.close()


def epoch_proof(chain: InProcessChain, epoch: int, host: str = "", after: int = 0) -> query_pb2.QueryEpochProofResponse:
    return chain.query(
        gonka("sprint").query + "EpochProof",
        query_pb2.QueryEpochProofRequest(epoch=epoch, host=host, after_height=after),
        query_pb2.QueryEpochProofResponse,
    )


def work_proof(chain: InProcessChain, inference: bytes) -> inference_query.QueryWorkProofResponse:
    return chain.query(
        gonka("inference").query + "WorkProof",
        inference_query.QueryWorkProofRequest(id=inference.hex()),
        inference_query.QueryWorkProofResponse,
    )


def genesis_set(chain: InProcessChain) -> bls_pb2.ValidatorSetHandoff:
    answer = chain.query(
        gonka("bls").query + "Handoffs", bls_query.QueryHandoffsRequest(limit=1), bls_query.QueryHandoffsResponse
    )
    return answer.handoffs[0].handoff


def client(chain: InProcessChain, backend: certificate.FastAggregateVerify = bls.fast_aggregate_verify) -> LightClient:
    return LightClient(chain.chain_id, genesis_set(chain), backend)


# --- the chain's side ------------------------------------------------------------------------------------


def test_the_summary_has_each_hosts_weight_work_root_inferences_and_tokens(proven: InProcessChain) -> None:
    ctx = proven.context()
    summary = proven.app.sprint_keeper.summary(ctx, 1)
    assert summary is not None and summary.height == 17 and summary.epoch == 1
    weights = proven.app.stake_keeper.epoch_weights(ctx, 1)
    expected = []
    for operator in sorted(bech32.decode(address_of(KEYS[i])) for i in range(HOSTS)):
        i = next(i for i in range(HOSTS) if bech32.decode(address_of(KEYS[i])) == operator)
        count = INFERENCES.get(i, 0)
        leaves = proven.app.inference_keeper.leaves(ctx, 1, operator)
        expected.append(
            sprint_pb2.HostSummary(
                host=bech32.encode(operator),
                weight=weights[operator],
                work_root=merkle.root(leaves) if count else b"",
                inferences=count,
                tokens=sum(30 + 2 * n for n in range(count)),
            )
        )
    assert list(summary.hosts) == expected
    assert weights[bech32.decode(address_of(KEYS[0]))] > weights[bech32.decode(address_of(KEYS[1]))]  # the deposit
    assert summary.host_count == HOSTS
    assert summary.total_weight == sum(weights.values())
    assert summary.total_inferences == 8 and summary.total_tokens == sum(h.tokens for h in expected)
    lines = [types.host_line(bech32.decode(h.host), h.weight, h.work_root, h.inferences, h.tokens) for h in expected]
    assert summary.hosts_root == merkle.root(lines)


def test_the_certificate_of_the_height_after_the_summary_signs_its_hash(proven: InProcessChain) -> None:
    ctx = proven.context()
    summary = proven.app.sprint_keeper.summary(ctx, 1)
    assert summary is not None
    digest = types.summary_hash(
        1, summary.host_count, summary.hosts_root, summary.total_weight, summary.total_inferences, summary.total_tokens
    )
    cert = proven.app.bls_keeper.certificate(ctx, 18)
    assert cert is not None and cert.included_height == 19
    assert [(e.name, e.digest) for e in cert.extras] == [(types.SUMMARY_EXTRA, digest)]
    assert [(e.name) for e in proven.app.bls_keeper.certificate(ctx, 10).extras] == [types.SUMMARY_EXTRA]  # epoch 0
    assert not proven.app.bls_keeper.certificate(ctx, 17).extras  # a height without extras signs as before
    answer = proven.query(
        gonka("bls").query + "Certificate",
        bls_query.QueryCertificateRequest(height=18),
        bls_query.QueryCertificateResponse,
    )
    extras = certificate.extras_digest([(types.SUMMARY_EXTRA, digest)])
    assert answer.message == certificate.signing_message(proven.chain_id, 18, cert.commitment, extras)
    keys = [v.public_key for v in answer.validator_set.validators]
    assert bls.fast_aggregate_verify(keys, answer.message, cert.signature)


def test_the_outgoing_set_signs_the_incoming_set(proven: InProcessChain) -> None:
    ctx = proven.context()
    handoffs = proven.app.bls_keeper.handoffs(ctx)
    assert [(h.effective_height, h.recorded_height) for h in handoffs] == [(1, 0), (15, 13)]
    incoming = handoffs[1]
    powers = {v.operator: v.power for v in incoming.validators}
    assert powers[address_of(KEYS[0])] > powers[address_of(KEYS[1])]
    assert [v.operator for v in incoming.validators] == sorted(
        (v.operator for v in incoming.validators), key=bech32.decode
    )
    set_hash = certificate.validator_set_hash(
        15,
        incoming.previous_hash,
        [certificate.HandedOff(bech32.decode(v.operator), v.public_key, v.power) for v in incoming.validators],
    )
    cert = proven.app.bls_keeper.certificate(ctx, 14)
    assert cert is not None and [(e.name, e.digest) for e in cert.extras] == [("bls/validator-set", set_hash)]
    outgoing = proven.app.bls_keeper.validator_set(ctx, cert.validator_set_hash)
    assert outgoing is not None
    old = {v.operator: v.power for v in handoffs[0].validators}
    assert {v.operator: v.power for v in outgoing.validators} == old  # the outgoing set signed, with its powers
    later = proven.app.bls_keeper.certificate(ctx, 15)
    assert later is not None
    signing = proven.app.bls_keeper.validator_set(ctx, later.validator_set_hash)
    assert signing is not None and {v.operator: v.power for v in signing.validators} == powers  # the new set signs


def test_certificates_with_extras_outlive_the_retention_window(tmp_path: Path) -> None:
    overrides = {"epochs": {"params": EPOCHS}, "bls": {"params": {"certificate_retention_blocks": "3"}}}
    with make_chain(tmp_path / "db", keyed=HOSTS, overrides=overrides) as chain:
        Network(chain).run_to(14)
        ctx = chain.context()
        kept = [c.height for c in chain.app.bls_keeper.certificates(ctx)]
        assert kept == [10, 11, 12, 13]  # epoch 0's summary certificate (10) and the window
        assert chain.app.bls_keeper.certificate(ctx, 10) is not None
        assert chain.app.bls_keeper.validator_set(ctx, chain.app.bls_keeper.certificate(ctx, 10).validator_set_hash)


# --- the light client ------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["blst", "py_ecc"])
def test_a_light_client_verifies_an_inference_from_the_genesis_set(proven: InProcessChain, backend: str) -> None:
    verify = bls.fast_aggregate_verify if backend == "blst" else G2ProofOfPossession.FastAggregateVerify
    light = client(proven, verify)
    proof = work_proof(proven, inference_id(2, 3))
    assert proof.final and proof.epoch == 1
    line = light.verify_work(inference_id(2, 3), proof, epoch_proof(proven, 1, proof.host))
    assert line.host == address_of(KEYS[2]) and line.inferences == 5
    assert light.trusted.effective_height == 15  # it walked the handoff
    whole = client(proven, verify).verify_summary(epoch_proof(proven, 1))  # the whole summary checks too
    assert whole.total_inferences == 8


def test_invalid_a_tampered_summary_is_refused(proven: InProcessChain) -> None:
    answer = epoch_proof(proven, 1, address_of(KEYS[0]))
    answer.summary.hosts[0].weight += 1
    with pytest.raises(ProofError, match="not in the summary's hosts root"):
        client(proven).verify_summary(answer)
    answer = epoch_proof(proven, 1)
    answer.summary.total_tokens += 1
    with pytest.raises(ProofError, match="does not sign this sprint/epoch-summary"):
        client(proven).verify_summary(answer)


def test_invalid_a_work_root_of_another_host_is_refused(proven: InProcessChain) -> None:
    proof = work_proof(proven, inference_id(2, 1))
    other = work_proof(proven, inference_id(0, 1))  # host 0's leaf and path, claimed for host 2's inference
    forged = inference_query.QueryWorkProofResponse()
    forged.CopyFrom(other)
    forged.leaf = proof.leaf
    answer = epoch_proof(proven, 1, proof.host)
    with pytest.raises(ProofError, match="another host's root|over 3 leaves"):
        client(proven).verify_work(inference_id(2, 1), forged, answer)
    with pytest.raises(ProofError, match="not in .* work root"):  # the right leaf, a path of the wrong index
        wrong = inference_query.QueryWorkProofResponse()
        wrong.CopyFrom(proof)
        wrong.index = (proof.index + 1) % proof.total
        client(proven).verify_work(inference_id(2, 1), wrong, answer)
    with pytest.raises(ProofError, match="has no line for the executor"):  # the summary line of another host
        client(proven).verify_work(inference_id(2, 1), proof, epoch_proof(proven, 1, address_of(KEYS[1])))


def test_invalid_a_forged_certificate_is_refused(proven: InProcessChain) -> None:
    answer = epoch_proof(proven, 1)
    answer.certificate.signature = bls.sign(SECRETS[0], b"another message")
    with pytest.raises(ProofError, match="forged"):
        client(proven).verify_summary(answer)
    answer = epoch_proof(proven, 1)
    answer.certificate.signers = certificate.encode_signers([True] + [False] * (HOSTS - 1))
    with pytest.raises(ProofError, match="not more than 2/3"):
        client(proven).verify_summary(answer)


def test_invalid_a_set_that_did_not_sign_its_successor_is_refused(proven: InProcessChain) -> None:
    """An impostor set (other keys) claims the handoff: its certificate is not the trusted set's."""
    answer = epoch_proof(proven, 1)
    impostors = [bls.keygen(bytes([0x90 + i]) * 32) for i in range(HOSTS)]
    proof = answer.handoffs[1]
    message = certificate.signing_message(
        proven.chain_id, proof.certificate.height, proof.certificate.commitment,
        certificate.extras_digest([(e.name, e.digest) for e in proof.certificate.extras]),
    )  # fmt: skip
    for member, secret in zip(proof.validator_set.validators, impostors):
        member.public_key = bls.public_key(secret)
    proof.certificate.signature = bls.aggregate([bls.sign(s, message) for s in impostors])
    with pytest.raises(ProofError, match="not in the trusted set with that key"):
        client(proven).verify_summary(answer)
    answer = epoch_proof(proven, 1)
    answer.handoffs[1].handoff.previous_hash = bytes(32)  # a set not handed off by the trusted one
    with pytest.raises(ProofError, match="does not follow the trusted set"):
        client(proven).verify_summary(answer)
    answer = epoch_proof(proven, 1)
    answer.handoffs[1].handoff.validators[0].power += 1  # a handoff other than the one signed
    with pytest.raises(ProofError, match="does not sign this bls/validator-set"):
        client(proven).verify_summary(answer)


# --- gonkad verify-work ----------------------------------------------------------------------------------


class ChainQuerier:
    """A node's gRPC answers, from the in-process chain."""

    def __init__(self, chain: InProcessChain) -> None:
        self.chain = chain

    def query(self, path: str, request: Message, response_type: type[Reply]) -> Reply:
        reply = self.chain.app.query(abci.RequestQuery(path=path, data=request.SerializeToString()))
        if reply.code:
            raise RPCError(reply.log)
        return response_type.FromString(reply.value)


def verify_work_line(
    proven: InProcessChain, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str
) -> tuple[str, int]:
    monkeypatch.setattr(verify_work_cmd, "Querier", lambda node, grpc: ChainQuerier(proven))
    args = build_parser().parse_args(["verify-work", *argv])
    code = 0
    try:
        args.func(args)
    except SystemExit as exc:
        code = int(exc.code or 0)
    return capsys.readouterr().out, code


def test_verify_work_prints_one_line(
    proven: InProcessChain, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out, code = verify_work_line(proven, monkeypatch, capsys, inference_id(0, 2).hex())
    assert code == 0 and out == (
        f"valid: inference {inference_id(0, 2).hex()} by {address_of(KEYS[0])} in epoch 1, certified at height 18\n"
    )
    out, code = verify_work_line(proven, monkeypatch, capsys, inference_id(0, 2).hex(), "--backend", "py_ecc")
    assert code == 0 and out.startswith("valid: ")
    out, code = verify_work_line(proven, monkeypatch, capsys, inference_id(4, 0).hex())
    assert code == 1 and out.startswith("invalid: ") and "not found" in out and out.count("\n") == 1
    impostor = genesis_set(proven)
    impostor.validators[0].public_key = bls.public_key(bls.keygen(b"\x99" * 32))
    path = proven.path.parent / "impostor.json"
    path.write_text(json.dumps(message_dict(impostor)))
    out, code = verify_work_line(proven, monkeypatch, capsys, inference_id(0, 2).hex(), "--genesis-set", str(path))
    assert code == 1 and out.startswith("invalid: ") and "does not follow the trusted set" in out
