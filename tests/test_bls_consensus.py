"""x/bls in the consensus path, driven in process as CometBFT drives it: each validator's share in its vote
extension (ExtendVote / VerifyVoteExtension), the proposer's certificate (PrepareProposal), the checks of every
validator (ProcessProposal), the certificate kept (FinalizeBlock), its query, beacon and client verifier, key
rotation timing, retention and params. The real network's path is tests/test_bls_localnet.py."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from pathlib import Path

import pytest
from chain import InProcessChain
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from cosmpy.protos.tendermint.types import params_pb2, validator_pb2

from gonkad import genesis
from protogen.gonka.bls.v1 import bls_pb2, query_pb2, tx_pb2
from sdk.abci.blocks import decode_injected_entry, decode_vote_extension, encode_injected_entry, encode_vote_extension
from sdk.address import consensus_address
from sdk.client.txbuilder import address_of, sign_tx
from sdk.crypto import bech32, bls, certificate, secp256k1
from sdk.services import gonka
from x.bls import certificates, client
from x.bls.keyfile import create_key_file, key_file
from x.bls.module import BlsModule
from x.genutil.gentx import build_gentx

CHAIN = "gonka-cert"
DENOM = "ngonka"
GNK = 10**9
KEYS = [secp256k1.PrivateKey(bytes([0x50 + i]) * 32) for i in range(6)]
SEEDS = [bytes([0x60 + i]) * 32 for i in range(6)]
SECRETS = [bls.keygen(seed) for seed in SEEDS]
CONSENSUS_KEYS = [bytes([0x70 + i]) * 32 for i in range(6)]
ADDRESSES = [consensus_address(pk) for pk in CONSENSUS_KEYS]
QUERY = gonka("bls").query
ACCEPT, REJECT = abci.ResponseProcessProposal.ACCEPT, abci.ResponseProcessProposal.REJECT
VE_ACCEPT, VE_REJECT = abci.ResponseVerifyVoteExtension.ACCEPT, abci.ResponseVerifyVoteExtension.REJECT
COMMIT, ABSENT = validator_pb2.BLOCK_ID_FLAG_COMMIT, validator_pb2.BLOCK_ID_FLAG_ABSENT
MODULES = ["bls"]


def extensions_from(height: int) -> params_pb2.ConsensusParams:
    return params_pb2.ConsensusParams(abci=params_pb2.ABCIParams(vote_extensions_enable_height=height))


def make_chain(
    path: Path,
    keyed: int = 4,
    plain: int = 0,
    *,
    node: int | None = None,
    fault: str = "",
    enable_height: int = 1,
    overrides: dict | None = None,
    authority: bytes | None = None,
    share_checks: str = "eager",
) -> InProcessChain:
    """Hosts 0..keyed-1 with a BLS key in their gentx, then ``plain`` without; equal collateral. ``node``: the
    host whose key file this node has (x/bls ``key_file``); ``fault``: x/bls ``test_fault``; ``share_checks``:
    x/bls ``share_checks`` ("" for the default), eager here so that VerifyVoteExtension's answer is the share's
    verdict (tests/test_bls_shares.py checks the deferred mode)."""
    state = genesis.merge_overrides(genesis.default_app_state(), overrides or {})
    gentxs = [
        build_gentx(
            KEYS[i],
            f"h{i}",
            CONSENSUS_KEYS[i],
            (DENOM, 1000 * GNK),
            CHAIN,
            bls_secret=SECRETS[i] if i < keyed else None,
        )
        for i in range(keyed + plain)
    ]
    state["genutil"] = {"gen_txs": [base64.b64encode(tx).decode() for tx in gentxs]}
    settings: dict[str, str] = {}
    if node is not None:
        home = path.parent / f"home{node}"
        create_key_file(home, SEEDS[node])
        settings["key_file"] = str(key_file(home))
    if fault:
        settings["test_fault"] = fault
    if share_checks:
        settings["share_checks"] = share_checks
    options = {"authority": authority} if authority is not None else {}
    return InProcessChain(
        path,
        {address_of(k): [(DENOM, 10_000 * GNK)] for k in KEYS},
        chain_id=CHAIN,
        app_state=state,
        consensus_params=extensions_from(enable_height),
        module_config={"bls": settings},
        **options,
    )  # type: ignore[arg-type]


def powers(chain: InProcessChain) -> dict[bytes, int]:
    """CometBFT address -> power, as InitChain gave the set."""
    return {consensus_address(v.pub_key.ed25519): v.power for v in chain.init_chain_response.validators}


def commitment(chain: InProcessChain, height: int) -> bytes:
    """The app hash in block ``height``'s header: what its votes sign."""
    return chain.init_chain_response.app_hash if height == 1 else chain.app.store.root_at(height - 1)


def share(i: int, chain: InProcessChain, height: int, secret: bytes | None = None) -> bytes:
    message = certificate.signing_message(CHAIN, height, commitment(chain, height))
    return bls.sign(SECRETS[i] if secret is None else secret, message)


def commits(
    chain: InProcessChain, shares: dict[int, bytes], voted: Sequence[int] | None = None
) -> tuple[abci.ExtendedCommitInfo, abci.CommitInfo]:
    """The last height's votes as PrepareProposal and ProcessProposal see them, in the set's order (by address
    here: the powers are equal). ``voted``: who precommitted (default: those with a share)."""
    voted = sorted(shares) if voted is None else voted
    order = sorted(range(len(chain.init_chain_response.validators)), key=lambda i: ADDRESSES[i])
    power = powers(chain)
    extended, plain = abci.ExtendedCommitInfo(), abci.CommitInfo()
    for i in order:
        flag = COMMIT if i in voted else ABSENT
        ext = encode_vote_extension({"bls": shares[i]}) if i in shares else b""
        validator = abci.Validator(address=ADDRESSES[i], power=power[ADDRESSES[i]])
        extended.votes.append(abci.ExtendedVoteInfo(validator=validator, vote_extension=ext, block_id_flag=flag))
        plain.votes.append(abci.VoteInfo(validator=validator, block_id_flag=flag))
    return extended, plain


def propose(chain: InProcessChain, extended: abci.ExtendedCommitInfo) -> list[bytes]:
    return list(
        chain.app.prepare_proposal(
            abci.RequestPrepareProposal(
                height=chain.height + 1,
                max_tx_bytes=1 << 20,
                local_last_commit=extended,
                proposer_address=ADDRESSES[0],
            )
        ).txs
    )


def process(chain: InProcessChain, txs: Sequence[bytes], plain: abci.CommitInfo) -> int:
    return chain.app.process_proposal(
        abci.RequestProcessProposal(
            height=chain.height + 1,
            txs=txs,
            proposed_last_commit=plain,
            proposer_address=ADDRESSES[0],
            hash=b"\x01" * 32,
        )
    ).status


def entry_of(txs: Sequence[bytes]) -> bls_pb2.BlockCertificate:
    name, payload = decode_injected_entry(txs[0])
    assert name == "bls"
    return bls_pb2.BlockCertificate.FromString(payload)


def certified_height(
    chain: InProcessChain, signers: Sequence[int], voted: Sequence[int] | None = None
) -> bls_pb2.BlockCertificate:
    """One height as the network runs it: ``signers`` sent their shares; the proposal is built, accepted and
    committed; returns its certificate."""
    height = chain.height
    extended, plain = commits(chain, {i: share(i, chain, height) for i in signers}, voted)
    txs = propose(chain, extended)
    assert process(chain, txs, plain) == ACCEPT
    result = chain.block(txs, last_commit=plain)
    assert result.tx_results[0].code == 0, result.tx_results[0].log
    return entry_of(txs)


def certificate_answer(chain: InProcessChain, height: int = 0) -> query_pb2.QueryCertificateResponse:
    return chain.query(
        QUERY + "Certificate", query_pb2.QueryCertificateRequest(height=height), query_pb2.QueryCertificateResponse
    )


def bitmap_of(chain: InProcessChain, members: Sequence[int]) -> bytes:
    order = sorted(range(len(chain.init_chain_response.validators)), key=lambda i: ADDRESSES[i])
    return certificate.encode_signers([i in members for i in order])


def verify(chain: InProcessChain, validator: int, extension: bytes, height: int | None = None) -> int:
    return chain.app.verify_vote_extension(
        abci.RequestVerifyVoteExtension(
            height=chain.height + 1 if height is None else height,
            hash=b"\x02" * 32,
            validator_address=ADDRESSES[validator],
            vote_extension=extension,
        )
    ).status


# --- vote extensions ------------------------------------------------------------------------------------


def test_a_validator_signs_the_voted_blocks_header_app_hash_and_others_check_it(tmp_path: Path) -> None:
    with make_chain(tmp_path / "db", keyed=4, plain=1, node=0) as chain:
        height = chain.height + 1
        extension = chain.app.extend_vote(abci.RequestExtendVote(height=height, hash=b"\x02" * 32)).vote_extension
        own = decode_vote_extension(extension, MODULES)["bls"]
        assert own == bls.sign(SECRETS[0], certificate.signing_message(CHAIN, height, chain.app.store.root_hash))
        assert verify(chain, 0, extension) == VE_ACCEPT
        assert verify(chain, 1, extension) == VE_REJECT  # the right message, the wrong validator's key
        wrong = {
            "another message": bls.sign(SECRETS[1], b"another message"),
            "another height": share(1, chain, height - 1),
            "95 bytes": share(1, chain, height)[:95],
            "not a point": b"\x01" * 96,
        }
        for what, data in wrong.items():
            assert verify(chain, 1, encode_vote_extension({"bls": data})) == VE_REJECT, what
        assert verify(chain, 1, encode_vote_extension({"bls": share(1, chain, height)})) == VE_ACCEPT
        assert verify(chain, 1, b"") == VE_REJECT  # a host with a key in force must send its share
        # host 4 has no key: it sends nothing, and anything it sends is refused
        assert verify(chain, 4, b"") == VE_ACCEPT
        assert verify(chain, 4, encode_vote_extension({"bls": share(4, chain, height)})) == VE_REJECT


def test_a_node_without_a_registered_key_adds_no_share(tmp_path: Path) -> None:
    with make_chain(tmp_path / "db", keyed=2, plain=1, node=2) as chain:  # host 2's key file, not registered
        assert chain.app.extend_vote(abci.RequestExtendVote(height=chain.height + 1)).vote_extension == b""
    with make_chain(tmp_path / "db2", keyed=2) as chain:  # no key file at all
        assert chain.app.extend_vote(abci.RequestExtendVote(height=chain.height + 1)).vote_extension == b""


# --- certificates -----------------------------------------------------------------------------------------


def test_the_proposer_aggregates_the_shares_it_received_and_the_chain_keeps_the_certificate(tmp_path: Path) -> None:
    with make_chain(tmp_path / "db") as chain:
        cert = certified_height(chain, [0, 1, 2])  # validator 3 did not vote: not in the bitmap
        assert (cert.height, cert.signers) == (1, bitmap_of(chain, [0, 1, 2]))
        message = certificate.signing_message(CHAIN, 1, chain.init_chain_response.app_hash)
        keys = [bls.public_key(SECRETS[i]) for i in sorted([0, 1, 2], key=lambda i: ADDRESSES[i])]
        assert bls.fast_aggregate_verify(keys, message, cert.signature)
        answer = certificate_answer(chain, 1)
        assert answer.certificate.included_height == 2 and answer.certificate.commitment == commitment(chain, 1)
        assert answer.chain_id == CHAIN and answer.message == message
        assert (answer.signed_power, answer.total_power) == (
            3 * powers(chain)[ADDRESSES[0]],
            sum(powers(chain).values()),
        )
        assert [v.address for v in answer.validator_set.validators] == sorted(ADDRESSES[:4])
        assert [v.public_key for v in answer.validator_set.validators] == [
            bls.public_key(SECRETS[i]) for i in sorted(range(4), key=lambda i: ADDRESSES[i])
        ]
        assert answer.beacon == hashlib.sha256(b"gonka/bls/v1/beacon" + cert.signature).digest()
        client.verify_certificate(answer, commitment(chain, 1), CHAIN)
        with pytest.raises(certificate.CertificateError, match="another app hash"):
            client.verify_certificate(answer, commitment(chain, 2), CHAIN)
        with pytest.raises(certificate.CertificateError, match="does not verify"):
            client.verify_certificate(answer, commitment(chain, 1), "another-chain")
        # a validator that voted but whose share never arrived is simply left out
        cert = certified_height(chain, [1, 2, 3], voted=[0, 1, 2, 3])
        assert cert.signers == bitmap_of(chain, [1, 2, 3])
        assert certificate_answer(chain).certificate.height == 2  # 0 asks for the latest
        beacon = chain.query(QUERY + "Beacon", query_pb2.QueryBeaconRequest(), query_pb2.QueryBeaconResponse)
        assert (beacon.height, beacon.beacon) == (2, certificate.beacon(cert.signature))
        ctx = chain.context()
        assert chain.app.bls_keeper.beacon(ctx) == beacon.beacon
        assert chain.app.bls_keeper.beacon(ctx, 1) == answer.beacon and chain.app.bls_keeper.beacon(ctx, 7) is None
        missing = chain.app.query(
            abci.RequestQuery(
                path=QUERY + "Certificate", data=query_pb2.QueryCertificateRequest(height=9).SerializeToString()
            )
        )
        assert (missing.codespace, missing.code) == ("sdk", 38) and "no certificate of height 9" in missing.log


def test_a_bad_late_share_is_left_out_of_the_aggregate(tmp_path: Path) -> None:
    """CometBFT adds precommits that arrive after the commit to the last commit without VerifyVoteExtension."""
    with make_chain(tmp_path / "db") as chain:
        height = chain.height
        shares = {i: share(i, chain, height) for i in range(3)}
        shares[3] = bls.sign(SECRETS[3], b"something else")
        extended, plain = commits(chain, shares)
        txs = propose(chain, extended)
        assert entry_of(txs).signers == bitmap_of(chain, [0, 1, 2])
        assert process(chain, txs, plain) == ACCEPT
        shares[2] = b"\x05" * 96  # two bad ones: too little power is left, so no certificate (and none is valid)
        extended, plain = commits(chain, shares)
        txs = propose(chain, extended)
        assert txs == [] and process(chain, txs, plain) == REJECT


def test_proposals_with_a_bad_certificate_are_rejected(tmp_path: Path) -> None:
    with make_chain(tmp_path / "db") as chain:
        height = chain.height
        shares = {i: share(i, chain, height) for i in range(4)}
        extended, plain = commits(chain, shares)
        good = entry_of(propose(chain, extended))
        order = sorted(range(4), key=lambda i: ADDRESSES[i])

        def entry(**change: object) -> list[bytes]:
            cert = bls_pb2.BlockCertificate()
            cert.CopyFrom(good)
            for field, value in change.items():
                setattr(cert, field, value)
            return [encode_injected_entry("bls", cert.SerializeToString())]

        two = bls.aggregate([shares[order[0]], shares[order[1]]])
        bad = {
            "missing": [],
            "not a certificate": [encode_injected_entry("bls", b"\xff\xff")],
            "not canonical": [encode_injected_entry("bls", good.SerializeToString() + b"\x08\x01")],
            "another height": entry(height=height + 1),
            "forged": entry(signature=bls.aggregate([bls.sign(SECRETS[i], b"forged") for i in range(4)])),
            "too little power": entry(signers=certificate.encode_signers([True, True, False, False]), signature=two),
            "bitmap claims one more": entry(
                signers=certificate.encode_signers([True, True, True, False]), signature=two
            ),
            "bitmap too long": entry(signers=good.signers + b"\x00"),
            "bits past the set": entry(signers=bytes([good.signers[0] | 0x10])),
            "no signature": entry(signature=b""),
        }
        for what, txs in bad.items():
            assert process(chain, txs, plain) == REJECT, what
        assert process(chain, entry(), plain) == ACCEPT
        # a signer whose precommit the block's last commit does not list
        _, without_first = commits(chain, shares, voted=order[1:])
        assert process(chain, entry(), without_first) == REJECT


@pytest.mark.parametrize(
    "fault, reason", [("forge-certificate", "does not verify"), ("weak-certificate", "not more than 2/3")]
)
def test_a_faulty_proposers_certificate_is_rejected(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, fault: str, reason: str
) -> None:
    with make_chain(tmp_path / "db", node=0, fault=fault) as chain:
        extended, plain = commits(chain, {i: share(i, chain, chain.height) for i in range(4)})
        txs = propose(chain, extended)
        assert txs, "the faulty proposer puts a certificate in"
        with caplog.at_level("INFO", logger="gonkad.bls"):
            assert process(chain, txs, plain) == REJECT
        assert reason in caplog.text


def test_certificates_are_required_only_when_every_validator_has_a_key(tmp_path: Path) -> None:
    with make_chain(tmp_path / "db", keyed=3, plain=1) as chain:
        _, plain = commits(chain, {}, voted=range(4))
        assert process(chain, [], plain) == ACCEPT  # host 3 has no key: the others may not reach 2/3
        cert = certified_height(chain, [0, 1, 2], voted=range(4))  # but 3 of 4 do here, so it is made
        assert cert.signers == bitmap_of(chain, [0, 1, 2])
    with make_chain(tmp_path / "off", enable_height=0) as chain:  # no vote extensions: nothing to certify
        _, plain = commits(chain, {}, voted=range(4))
        assert propose(chain, abci.ExtendedCommitInfo()) == [] and process(chain, [], plain) == ACCEPT
    with make_chain(tmp_path / "later", enable_height=5) as chain:
        _, plain = commits(chain, {}, voted=range(4))
        assert process(chain, [], plain) == ACCEPT


def test_a_new_key_signs_from_the_height_after_its_block(tmp_path: Path) -> None:
    """Votes of height H are checked against the state after H-1 (VerifyVoteExtension) and again after H (the
    certificate in block H+1); a key replaced in block H must give both checks the same answer."""
    with make_chain(tmp_path / "db") as chain:
        certified_height(chain, range(4))
        account = chain.account(address_of(KEYS[0]))
        assert account is not None
        msg = tx_pb2.MsgRegisterBlsKey(
            operator=address_of(KEYS[0]),
            public_key=bls.public_key(SECRETS[5]),
            proof_of_possession=bls.pop_prove(SECRETS[5]),
        )
        raw = sign_tx(KEYS[0], [msg], CHAIN, account.account_number, account.sequence, gas_limit=1_000_000)
        height = chain.height
        extended, plain = commits(chain, {i: share(i, chain, height) for i in range(4)})
        txs = propose(chain, extended)
        assert chain.block([*txs, raw], last_commit=plain).tx_results[-1].code == 0  # replaced in block H
        replaced_at = chain.height
        operator = bytes(chain.app.stake_keeper.host_by_consensus_address(chain.context(), ADDRESSES[0]))
        keeper, ctx = chain.app.bls_keeper, chain.context()
        assert keeper.key_for_votes(ctx, operator, replaced_at) == bls.public_key(SECRETS[0])
        assert keeper.key_for_votes(ctx, operator, replaced_at + 1) == bls.public_key(SECRETS[5])
        # block H+1 certifies H's votes, signed with the old key, and is accepted
        certified_height(chain, range(4))
        # H+1's votes: the old key's share is refused and left out; the new key's counts
        assert verify(chain, 0, encode_vote_extension({"bls": share(0, chain, chain.height + 1)})) == VE_REJECT
        new = share(0, chain, chain.height + 1, SECRETS[5])
        assert verify(chain, 0, encode_vote_extension({"bls": new})) == VE_ACCEPT
        height = chain.height
        shares = {i: share(i, chain, height) for i in range(4)}
        extended, plain = commits(chain, shares)
        assert entry_of(propose(chain, extended)).signers == bitmap_of(chain, [1, 2, 3])
        shares[0] = share(0, chain, height, SECRETS[5])
        extended, plain = commits(chain, shares)
        txs = propose(chain, extended)
        assert entry_of(txs).signers == bitmap_of(chain, range(4)) and process(chain, txs, plain) == ACCEPT


def test_certificates_past_the_retention_are_pruned_with_their_sets(tmp_path: Path) -> None:
    overrides = {"bls": {"params": {"certificate_retention_blocks": "3"}}}
    with make_chain(tmp_path / "db", overrides=overrides) as chain:  # invariants checked after every block
        for _ in range(6):
            certified_height(chain, range(4))
        ctx = chain.context()
        kept = [c.height for c in chain.app.bls_keeper.certificates(ctx)]
        assert kept == [chain.height - 3, chain.height - 2, chain.height - 1]
        [set_hash] = chain.app.bls_keeper.stored_validator_sets(ctx)
        assert chain.app.bls_keeper.validator_set_refs(ctx) == {set_hash: 3}
        exported = chain.app.export_app_state()["bls"]
        assert exported["params"] == {"certificate_retention_blocks": "3"} and len(exported["keys"]) == 4


def test_params_change_only_by_the_authority(tmp_path: Path) -> None:
    authority = KEYS[5]
    with make_chain(tmp_path / "db", authority=bech32.decode(address_of(authority))) as chain:
        for signer, codespace, code in ((KEYS[1], "gov", 13), (authority, "", 0)):  # gov/13: invalid authority
            account = chain.account(address_of(signer))
            assert account is not None
            msg = tx_pb2.MsgUpdateParams(
                authority=address_of(signer), params=bls_pb2.Params(certificate_retention_blocks=9)
            )
            raw = sign_tx(signer, [msg], CHAIN, account.account_number, account.sequence, gas_limit=1_000_000)
            result = chain.block([raw]).tx_results[0]
            assert (result.codespace, result.code) == (codespace, code), result.log
        params = chain.query(QUERY + "Params", query_pb2.QueryParamsRequest(), query_pb2.QueryParamsResponse).params
        assert params.certificate_retention_blocks == 9


def test_node_settings_are_checked(tmp_path: Path) -> None:
    module = BlsModule(None, b"")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown settings"):
        module.configure({"key": "x"})
    with pytest.raises(ValueError, match="test_fault must be one of"):
        module.configure({"test_fault": "be-evil"})
    module.configure({"key_file": str(tmp_path / "none.json")})  # a node without a key signs nothing
    assert module.node_key is None and certificates.FAULTS == ("forge-certificate", "weak-certificate")
