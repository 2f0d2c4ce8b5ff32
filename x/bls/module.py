"""x/bls wired as a module: hosts' BLS12-381 keys (registration, queries, genesis, invariants) and the block
certificates of the consensus path (vote extensions, proposals, storage; x/bls/certificates.py)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from protogen.gonka.bls.v1 import bls_pb2
from sdk.abci.blocks import BlockInfo, VoteExtension
from sdk.context import Context
from sdk.crypto import bls
from sdk.invariants import Invariant
from sdk.module import BaseModule, MsgRoute, QueryRoute
from sdk.telemetry.figures import Figure
from x.bls import certificates, genesis, invariants, keys, metrics, msg_server, query_server
from x.bls.keeper import BlsKeeper
from x.bls.keyfile import read_secret
from x.bls.shares import MODES, ShareChecks

log = logging.getLogger("gonkad.bls")


class BlsModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: BlsKeeper, authority: bytes) -> None:
        self.keeper = keeper
        self.authority = authority
        self.node_key: certificates.NodeKey | None = None
        self.shares = ShareChecks()
        self.fault = ""
        self.warned = False

    def configure(self, config: Mapping[str, Any]) -> None:
        """``[modules.bls]`` of app.toml: ``key_file`` (the node's BLS key; gonkad passes its home's
        config/bls_key.json, and a node without one signs nothing), ``share_checks`` (x/bls/shares.py MODES:
        how this node verifies others' shares) and ``test_fault`` (test networks only: one of
        certificates.FAULTS, this node's proposals then carry a bad certificate)."""
        unknown = sorted(set(config) - {"key_file", "share_checks", "test_fault"})
        if unknown:
            raise ValueError(f"module bls: unknown settings {unknown}")
        try:
            self.shares = ShareChecks(str(config.get("share_checks", MODES[0])))
        except ValueError as exc:
            raise ValueError(f"module bls: {exc}") from None
        fault = str(config.get("test_fault", ""))
        if fault and fault not in certificates.FAULTS:
            raise ValueError(f"module bls: test_fault must be one of {certificates.FAULTS}, got {fault!r}")
        self.fault = fault
        path = config.get("key_file")
        if path and Path(path).exists():
            secret = read_secret(Path(path))
            self.node_key = certificates.NodeKey(secret, bls.public_key(secret))
        elif path:
            log.warning("no BLS key file at %s: this node adds no BLS share to its votes", path)

    def default_genesis(self) -> dict[str, Any]:
        return genesis.default_genesis()

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        genesis.init_genesis(ctx, self.keeper, state)

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        return genesis.export_genesis(ctx, self.keeper)

    def end_block(self, ctx: Context, block: BlockInfo) -> None:
        """Remember what this height's votes sign, when they carry extensions (the next block's certificate
        checks against it; a chain without them keeps no per-block record), fix the next height's extras (a
        handoff when this block changed the validator set: x/stake's end block runs before this one), and drop
        the certificates that leave the retention window. A chain whose next votes carry no extensions signs
        nothing, so it records neither extras nor handoffs."""
        if certificates.extensions_enabled(ctx, block.height):
            self.keeper.record_commitment(ctx, block.height, block.app_hash)
        if certificates.extensions_enabled(ctx, block.height + 1):
            self.keeper.record_next_extras(ctx, block.height)
        self.keeper.prune_certificates(ctx, block.height)

    def extend_vote(self, ctx: Context, block: BlockInfo) -> bytes:
        share = certificates.vote_share(self.keeper, ctx, block, self.node_key, self.shares)
        if not share and self.node_key is not None and not self.warned:
            self.warned = True  # once: the node signs again as soon as its key is the registered one
            log.warning(
                "this node's BLS key %s… is not the key in force for any host at height %d: its votes carry "
                "no share, and other validators refuse them",
                self.node_key.public_key.hex()[:16],
                block.height,
            )
        return share

    def verify_vote_extension(self, ctx: Context, block: BlockInfo, validator: bytes, extension: bytes) -> bool:
        return certificates.share_is_valid(self.keeper, ctx, block, validator, extension, self.shares)

    def prepare_proposal(self, ctx: Context, block: BlockInfo, extensions: Sequence[VoteExtension]) -> bytes | None:
        return certificates.build_certificate(self.keeper, ctx, block, extensions, self.shares, self.fault)

    def process_proposal(self, ctx: Context, block: BlockInfo, entry: bytes | None) -> bool:
        reason = certificates.check_certificate(self.keeper, ctx, block, entry)
        if reason is not None:
            log.info("block %d: %s", block.height, reason)
        return reason is None

    def deliver_entry(self, ctx: Context, block: BlockInfo, entry: bytes) -> None:
        """Keep the certificate ProcessProposal accepted, with the validator set its bitmap indexes."""
        cert = certificates.decode_certificate(entry)
        record = self.keeper.last_commitment(ctx)
        if record is None or record[0] != cert.height or cert.height != block.height - 1:
            raise ValueError(f"certificate of height {cert.height} in block {block.height}")
        validator_set = self.keeper.signing_set(ctx, block.decided_last_commit, cert.height)
        self.keeper.store_certificate(
            ctx,
            bls_pb2.Certificate(
                height=cert.height,
                signers=cert.signers,
                signature=cert.signature,
                commitment=record[1],
                included_height=block.height,
                extras=self.keeper.extras(ctx, cert.height),
            ),
            validator_set,
        )

    def invariants(self) -> dict[str, Invariant]:
        return {
            "indexes-agree": lambda ctx: invariants.indexes_agree(self.keeper, ctx),
            "certificates-named-sets": lambda ctx: invariants.certificate_sets_kept(self.keeper, ctx),
        }

    def msg_routes(self) -> dict[str, MsgRoute]:
        return msg_server.routes(self.keeper, self.authority)

    def metrics(self, ctx: Context) -> list[Figure]:
        return metrics.figures(self.keeper, ctx)

    def query_routes(self) -> dict[str, QueryRoute]:
        return query_server.QueryServer(self.keeper).routes()
