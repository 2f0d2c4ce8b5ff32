"""cosmos.base.tendermint.v1beta1.Service: node info, sync state, blocks and validator sets, converted from
CometBFT's RPC JSON.

CometBFT's JSON writes hashes and addresses as hex and other bytes as base64; after turning the hex
fields into base64 (and one renamed field) the JSON parses straight into the tendermint protobuf types.
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any, TypeVar

from cosmpy.protos.cosmos.base.query.v1beta1 import pagination_pb2
from cosmpy.protos.cosmos.base.tendermint.v1beta1 import query_pb2
from cosmpy.protos.cosmos.base.tendermint.v1beta1 import types_pb2 as sdk_types
from cosmpy.protos.cosmos.crypto.ed25519 import keys_pb2 as ed25519
from cosmpy.protos.cosmos.crypto.secp256k1 import keys_pb2 as secp256k1
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from cosmpy.protos.tendermint.p2p import types_pb2 as p2p
from cosmpy.protos.tendermint.types import block_pb2
from cosmpy.protos.tendermint.types import types_pb2 as tm_types
from google.protobuf import json_format
from google.protobuf.any_pb2 import Any as AnyPb

from sdk.baseapp import BaseApp
from sdk.client.rpc import CometRPC
from sdk.crypto import bech32
from sdk.errors import ErrInvalidRequest
from sdk.grpc.comet import call_with_client_input, comet_page
from sdk.grpc.methods import Methods

APP_NAME = "gonkad"
VALCONS_PREFIX = bech32.ACCOUNT_PREFIX + "valcons"
_HEX_FIELDS = frozenset(
    {
        "hash",
        "last_commit_hash",
        "data_hash",
        "validators_hash",
        "next_validators_hash",
        "consensus_hash",
        "app_hash",
        "last_results_hash",
        "evidence_hash",
        "proposer_address",
        "validator_address",
    }
)
_RENAMED = {"parts": "part_set_header"}

_PUBKEY_TYPES = {"tendermint/PubKeyEd25519": ed25519.PubKey, "tendermint/PubKeySecp256k1": secp256k1.PubKey}
"""CometBFT's amino JSON names of consensus keys, and the SDK types it shows them as."""

BlockResponse = TypeVar("BlockResponse", query_pb2.GetLatestBlockResponse, query_pb2.GetBlockByHeightResponse)
ValidatorSetResponse = TypeVar(
    "ValidatorSetResponse", query_pb2.GetLatestValidatorSetResponse, query_pb2.GetValidatorSetByHeightResponse
)


def _proto_json(value: Any) -> Any:
    """CometBFT's JSON as protobuf JSON: hex fields to base64, ``parts`` to ``part_set_header``."""
    if isinstance(value, dict):
        return {
            _RENAMED.get(k, k): base64.b64encode(bytes.fromhex(v)).decode()
            if k in _HEX_FIELDS and isinstance(v, str)
            else _proto_json(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_proto_json(v) for v in value]
    return value


def sdk_block_of(block: block_pb2.Block) -> sdk_types.Block:
    """The SDK's block type differs only in the proposer, which it shows as a bech32 consensus address."""
    header = tm_types.Header()
    header.CopyFrom(block.header)
    header.ClearField("proposer_address")
    sdk_header = sdk_types.Header.FromString(header.SerializeToString())  # same field numbers
    sdk_header.proposer_address = bech32.encode(block.header.proposer_address, VALCONS_PREFIX)
    return sdk_types.Block(header=sdk_header, data=block.data, evidence=block.evidence, last_commit=block.last_commit)


def block_response(response_type: type[BlockResponse], result: dict[str, Any]) -> BlockResponse:
    """From CometBFT's ``/block`` result. Evidence is left out: CometBFT writes it as amino JSON."""
    block_json = {k: v for k, v in result["block"].items() if k != "evidence"}
    block = json_format.ParseDict(_proto_json(block_json), block_pb2.Block())
    block_id = json_format.ParseDict(_proto_json(result["block_id"]), tm_types.BlockID())
    return response_type(block_id=block_id, block=block, sdk_block=sdk_block_of(block))


def sdk_validator(validator: dict[str, Any]) -> query_pb2.Validator:
    """One entry of CometBFT's ``/validators``, with a bech32 consensus address and the key packed in Any."""
    key = validator["pub_key"]
    key_type = _PUBKEY_TYPES.get(key["type"])
    if key_type is None:
        raise ValueError(f"validator key type {key['type']!r} has no SDK type")
    pub_key = AnyPb()
    pub_key.Pack(key_type(key=base64.b64decode(key["value"])), type_url_prefix="/")
    return query_pb2.Validator(
        address=bech32.encode(bytes.fromhex(validator["address"]), VALCONS_PREFIX),
        pub_key=pub_key,
        voting_power=int(validator["voting_power"]),
        proposer_priority=int(validator["proposer_priority"]),
    )


def validator_set_response(response_type: type[ValidatorSetResponse], result: dict[str, Any]) -> ValidatorSetResponse:
    """From CometBFT's ``/validators`` result; the page's ``total`` is the whole set's size, as the SDK gives it."""
    return response_type(
        block_height=int(result["block_height"]),
        validators=[sdk_validator(v) for v in result["validators"]],
        pagination=pagination_pb2.PageResponse(total=int(result["total"])),
    )


class TendermintService:
    NAME = "cosmos.base.tendermint.v1beta1.Service"

    def __init__(self, app: BaseApp, rpc: CometRPC) -> None:
        self.app = app
        self.rpc = rpc

    def methods(self) -> Methods:
        return {
            "GetNodeInfo": (query_pb2.GetNodeInfoRequest, self.get_node_info),
            "GetLatestBlock": (query_pb2.GetLatestBlockRequest, self.get_latest_block),
            "GetBlockByHeight": (query_pb2.GetBlockByHeightRequest, self.get_block_by_height),
            "GetSyncing": (query_pb2.GetSyncingRequest, self.get_syncing),
            "GetLatestValidatorSet": (query_pb2.GetLatestValidatorSetRequest, self.get_latest_validator_set),
            "GetValidatorSetByHeight": (query_pb2.GetValidatorSetByHeightRequest, self.get_validator_set_by_height),
        }

    def check_committed(self, height: int) -> None:
        """Only blocks this node has committed: CometBFT's own error for others names no height."""
        latest = self.app.store.version
        if not 1 <= height <= latest:
            raise ErrInvalidRequest.wrap(f"height {height} is not a committed block; latest is {latest}")

    async def get_node_info(self, req: query_pb2.GetNodeInfoRequest) -> query_pb2.GetNodeInfoResponse:
        info = (await asyncio.to_thread(self.rpc.status))["node_info"]
        protocol = info["protocol_version"]
        node_info = p2p.DefaultNodeInfo(
            protocol_version=p2p.ProtocolVersion(
                p2p=int(protocol["p2p"]), block=int(protocol["block"]), app=int(protocol["app"])
            ),
            default_node_id=info["id"],
            listen_addr=info["listen_addr"],
            network=info["network"],
            version=info["version"],
            channels=bytes.fromhex(info["channels"]),
            moniker=info["moniker"],
            other=p2p.DefaultNodeInfoOther(
                tx_index=info["other"]["tx_index"], rpc_address=info["other"]["rpc_address"]
            ),
        )
        version = query_pb2.VersionInfo(
            name=self.app.name, app_name=APP_NAME, version=self.app.info(abci.RequestInfo()).version
        )
        return query_pb2.GetNodeInfoResponse(default_node_info=node_info, application_version=version)

    async def get_latest_block(self, req: query_pb2.GetLatestBlockRequest) -> query_pb2.GetLatestBlockResponse:
        return block_response(query_pb2.GetLatestBlockResponse, await asyncio.to_thread(self.rpc.call, "block"))

    async def get_block_by_height(self, req: query_pb2.GetBlockByHeightRequest) -> query_pb2.GetBlockByHeightResponse:
        self.check_committed(req.height)
        result = await asyncio.to_thread(self.rpc.block, req.height)
        return block_response(query_pb2.GetBlockByHeightResponse, result)

    async def get_syncing(self, req: query_pb2.GetSyncingRequest) -> query_pb2.GetSyncingResponse:
        """Whether this node is still catching up (block sync), so its answers lag the chain."""
        status = await asyncio.to_thread(self.rpc.status)
        return query_pb2.GetSyncingResponse(syncing=bool(status["sync_info"]["catching_up"]))

    async def get_latest_validator_set(
        self, req: query_pb2.GetLatestValidatorSetRequest
    ) -> query_pb2.GetLatestValidatorSetResponse:
        result = await self._validators(req.pagination)
        return validator_set_response(query_pb2.GetLatestValidatorSetResponse, result)

    async def get_validator_set_by_height(
        self, req: query_pb2.GetValidatorSetByHeightRequest
    ) -> query_pb2.GetValidatorSetByHeightResponse:
        self.check_committed(req.height)
        result = await self._validators(req.pagination, height=str(req.height))
        return validator_set_response(query_pb2.GetValidatorSetByHeightResponse, result)

    async def _validators(self, pagination: pagination_pb2.PageRequest, **height: str) -> dict[str, Any]:
        """One page of CometBFT's ``/validators`` (paged by offset and limit; a key is ignored, as by the SDK)."""
        page, per_page = comet_page(pagination.offset, pagination.limit)
        return await call_with_client_input(
            self.rpc,
            "validators",
            f"validator set page {page} ({per_page} per page)",
            page=str(page),
            per_page=str(per_page),
            **height,
        )
