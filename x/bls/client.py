"""Checking a block certificate outside the chain, from a node's gRPC answers only (x/bls README, "Verifying a
certificate"): the certificate with its validator set, and the certified block's header for its app hash."""

from __future__ import annotations

from cosmpy.protos.cosmos.base.tendermint.v1beta1 import query_pb2 as tendermint_query

from protogen.gonka.bls.v1 import query_pb2
from sdk.client.querier import Querier
from sdk.crypto import bls, certificate
from sdk.crypto.certificate import FastAggregateVerify
from sdk.services import gonka

TENDERMINT = "/cosmos.base.tendermint.v1beta1.Service/"


def verify_certificate(
    answer: query_pb2.QueryCertificateResponse,
    header_app_hash: bytes,
    chain_id: str,
    fast_aggregate_verify: FastAggregateVerify = bls.fast_aggregate_verify,
) -> None:
    """Raise CertificateError unless ``answer`` proves that validators holding more than 2/3 of its set's power
    signed ``chain_id``'s certified height with ``header_app_hash`` (the app hash in that height's block
    header, from a source the caller trusts). The message is recomputed here, never taken from the answer.
    ``fast_aggregate_verify``: the BLS backend, e.g. py_ecc's ``G2ProofOfPossession.FastAggregateVerify``."""
    cert = answer.certificate
    if cert.commitment != header_app_hash:
        raise certificate.CertificateError("the certificate signs another app hash than the block header's")
    extras = certificate.extras_digest([(e.name, e.digest) for e in cert.extras])
    message = certificate.signing_message(chain_id, cert.height, header_app_hash, extras)
    validators = [certificate.Validator(v.public_key, v.power) for v in answer.validator_set.validators]
    certificate.verify(message, cert.signers, cert.signature, validators, fast_aggregate_verify)


def fetch_and_verify(
    grpc_address: str,
    height: int,
    chain_id: str,
    fast_aggregate_verify: FastAggregateVerify = bls.fast_aggregate_verify,
) -> query_pb2.QueryCertificateResponse:
    """``height``'s certificate from a node's gRPC, checked against the same node's block header of that height
    (``cosmos.base.tendermint.v1beta1.Service/GetBlockByHeight``); raises CertificateError if it fails."""
    querier = Querier("", grpc_address)
    answer = querier.query(
        gonka("bls").query + "Certificate",
        query_pb2.QueryCertificateRequest(height=height),
        query_pb2.QueryCertificateResponse,
    )
    block = querier.query(
        TENDERMINT + "GetBlockByHeight",
        tendermint_query.GetBlockByHeightRequest(height=height),
        tendermint_query.GetBlockByHeightResponse,
    )
    verify_certificate(answer, bytes(block.sdk_block.header.app_hash), chain_id, fast_aggregate_verify)
    return answer
