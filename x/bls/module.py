"""x/bls wired as a module: hosts' BLS12-381 keys (registration, queries, genesis, invariants) and the block
certificates of the consensus path (vote extensions, proposals, storage; x/bls/consensus.py)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from google.protobuf import json_format

from protogen.gonka.bls.v1 import bls_pb2, genesis_pb2, tx_pb2
from sdk.cli.flags import message_dict
from sdk.abci.blocks import BlockInfo, VoteExtension
from sdk.context import Context
from sdk.crypto import bech32, bls
from sdk.errors import ABCIError
from sdk.invariants import Invariant
from sdk.module import BaseModule, MsgRoute, QueryRoute, type_url
from sdk.params import update_params_route
from x.bls import consensus, invariants, keys, msg_server
from x.bls.keeper import BlsKeeper
from x.bls.keyfile import read_secret
from x.bls.params import default_params, validate_params
from x.bls.query_server import BlsQueries

log = logging.getLogger("gonkad.bls")


class BlsModule(BaseModule):
    name = keys.MODULE_NAME
    store_prefix = keys.STORE_PREFIX

    def __init__(self, keeper: BlsKeeper, authority: bytes) -> None:
        self.keeper = keeper
        self.authority = authority
        self.node_key: consensus.NodeKey | None = None
        self.fault = ""
        self.warned = False

    # --- node-local settings -------------------------------------------------------------------------

    def configure(self, config: Mapping[str, Any]) -> None:
        """``[modules.bls]`` of app.toml: ``key_file`` (the node's BLS key; gonkad passes its home's
        config/bls_key.json, and a node without one signs nothing) and ``test_fault`` (test networks only:
        one of consensus.FAULTS, this node's proposals then carry a bad certificate)."""
        unknown = sorted(set(config) - {"key_file", "test_fault"})
        if unknown:
            raise ValueError(f"module bls: unknown settings {unknown}")
        fault = str(config.get("test_fault", ""))
        if fault and fault not in consensus.FAULTS:
            raise ValueError(f"module bls: test_fault must be one of {consensus.FAULTS}, got {fault!r}")
        self.fault = fault
        path = config.get("key_file")
        if path and Path(path).exists():
            secret = read_secret(Path(path))
            self.node_key = consensus.NodeKey(secret, bls.public_key(secret))
        elif path:
            log.warning("no BLS key file at %s: this node adds no BLS share to its votes", path)

    # --- genesis ---------------------------------------------------------------------------------

    def default_genesis(self) -> dict[str, Any]:
        return message_dict(genesis_pb2.GenesisState(params=default_params()))

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        """``gonka.bls.v1.GenesisState``: params (default if left out) and (operator, key) pairs of an exported
        chain. Every key is checked again (KeyValidate) and every operator must be a host (x/stake's genesis
        runs first); an operator or a key may appear once. Proofs are not in the export: each was verified
        when its key was registered. A new chain's keys arrive in gentxs (x/genutil), after this."""
        genesis = json_format.ParseDict(state, genesis_pb2.GenesisState())
        params = genesis.params if genesis.HasField("params") else default_params()
        validate_params(params)
        self.keeper.set_params(ctx, params)
        seen: set[bytes] = set()
        for entry in genesis.keys:
            what = f"bls genesis key of {entry.operator!r}"
            try:
                operator = bech32.decode(entry.operator)
                msg_server.check_key(entry.public_key)
                if operator in seen or entry.public_key in seen:
                    raise ValueError("operator or key repeated")
                seen.update((operator, bytes(entry.public_key)))
                self.keeper.set_key(ctx, operator, bytes(entry.public_key))
            except ABCIError as err:
                raise ValueError(f"{what}: {err.log}") from None
            except ValueError as err:
                raise ValueError(f"{what}: {err}") from None

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        return message_dict(genesis_pb2.GenesisState(
            keys=[bls_pb2.BlsKey(operator=bech32.encode(op), public_key=pk) for op, pk in self.keeper.all_keys(ctx)],
            params=self.keeper.get_params(ctx)))

    # --- blocks and the consensus path -----------------------------------------------------------

    def end_block(self, ctx: Context, block: BlockInfo) -> None:
        """Remember what this height's votes sign, when they carry extensions (the next block's certificate
        checks against it; a chain without them keeps no per-block record), and drop the certificates that
        leave the retention window."""
        if consensus.extensions_enabled(ctx, block.height):
            self.keeper.record_commitment(ctx, block.height, block.app_hash)
        self.keeper.prune_certificates(ctx, block.height)

    def extend_vote(self, ctx: Context, block: BlockInfo) -> bytes:
        share = consensus.vote_share(self.keeper, ctx, block, self.node_key)
        if not share and self.node_key is not None and not self.warned:
            self.warned = True  # once: the node signs again as soon as its key is the registered one
            log.warning("this node's BLS key %s… is not the key in force for any host at height %d: its votes carry "
                        "no share, and other validators refuse them", self.node_key.public_key.hex()[:16],
                        block.height)
        return share

    def verify_vote_extension(self, ctx: Context, block: BlockInfo, validator: bytes, extension: bytes) -> bool:
        return consensus.share_is_valid(self.keeper, ctx, block, validator, extension)

    def prepare_proposal(self, ctx: Context, block: BlockInfo, extensions: Sequence[VoteExtension]) -> bytes | None:
        return consensus.build_certificate(self.keeper, ctx, block, extensions, self.fault)

    def process_proposal(self, ctx: Context, block: BlockInfo, entry: bytes | None) -> bool:
        reason = consensus.check_certificate(self.keeper, ctx, block, entry)
        if reason is not None:
            log.info("block %d: %s", block.height, reason)
        return reason is None

    def deliver_entry(self, ctx: Context, block: BlockInfo, entry: bytes) -> None:
        """Keep the certificate ProcessProposal accepted, with the validator set its bitmap indexes."""
        cert = consensus.decode_certificate(entry)
        record = self.keeper.last_commitment(ctx)
        if record is None or record[0] != cert.height or cert.height != block.height - 1:
            raise ValueError(f"certificate of height {cert.height} in block {block.height}")
        validator_set = self.keeper.signing_set(ctx, block.decided_last_commit, cert.height)
        self.keeper.store_certificate(ctx, bls_pb2.Certificate(
            height=cert.height, signers=cert.signers, signature=cert.signature, commitment=record[1],
            included_height=block.height), validator_set)

    # --- routes and invariants -------------------------------------------------------------------

    def invariants(self) -> dict[str, Invariant]:
        return {
            "indexes-agree": lambda ctx: invariants.indexes_agree(self.keeper, ctx),
            "certificates-named-sets": lambda ctx: invariants.certificate_sets_kept(self.keeper, ctx),
        }

    def msg_routes(self) -> dict[str, MsgRoute]:
        k = self.keeper
        return {
            type_url(tx_pb2.MsgRegisterBlsKey): MsgRoute(
                tx_pb2.MsgRegisterBlsKey, msg_server.operator_signers, msg_server.validate_register,
                lambda ctx, msg: msg_server.handle_register(ctx, k, msg),
            ),
            type_url(tx_pb2.MsgUpdateParams): update_params_route(
                tx_pb2.MsgUpdateParams, self.authority, validate_params, k.set_params),
        }

    def query_routes(self) -> dict[str, QueryRoute]:
        return BlsQueries(self.keeper).routes()
