"""Build and sign Cosmos transactions (SIGN_MODE_DIRECT), as a wallet does."""

from __future__ import annotations

from collections.abc import Sequence

from cosmpy.protos.cosmos.auth.v1beta1 import auth_pb2
from cosmpy.protos.cosmos.auth.v1beta1 import query_pb2 as auth_query
from cosmpy.protos.cosmos.bank.v1beta1 import tx_pb2 as bank_tx
from cosmpy.protos.cosmos.crypto.secp256k1 import keys_pb2
from cosmpy.protos.cosmos.tx.v1beta1 import tx_pb2
from google.protobuf.any_pb2 import Any as AnyPb
from google.protobuf.message import Message

from sdk.client.rpc import CometRPC, RPCError
from sdk.coins import Coins
from sdk.crypto import bech32, secp256k1
from sdk.tx import SECP256K1_PUBKEY_URL, SIGN_MODE_DIRECT, sign_doc_bytes


def pack(msg: Message) -> AnyPb:
    return AnyPb(type_url="/" + msg.DESCRIPTOR.full_name, value=msg.SerializeToString())


def sign_tx(
    key: secp256k1.PrivateKey,
    messages: Sequence[Message],
    chain_id: str,
    account_number: int,
    sequence: int,
    fee: Coins = Coins(),
    gas_limit: int = 200_000,
    memo: str = "",
) -> bytes:
    """One signer, SIGN_MODE_DIRECT over SignDoc{body, auth_info, chain_id, account_number}."""
    body = tx_pb2.TxBody(messages=[pack(m) for m in messages], memo=memo).SerializeToString()
    signer = tx_pb2.SignerInfo(
        public_key=AnyPb(type_url=SECP256K1_PUBKEY_URL, value=keys_pb2.PubKey(key=key.public_key).SerializeToString()),
        mode_info=tx_pb2.ModeInfo(single=tx_pb2.ModeInfo.Single(mode=SIGN_MODE_DIRECT)),
        sequence=sequence,
    )
    auth_info = tx_pb2.AuthInfo(
        signer_infos=[signer], fee=tx_pb2.Fee(amount=fee.to_proto(), gas_limit=gas_limit)
    ).SerializeToString()
    signature = key.sign(sign_doc_bytes(body, auth_info, chain_id, account_number))
    return tx_pb2.TxRaw(body_bytes=body, auth_info_bytes=auth_info, signatures=[signature]).SerializeToString()


def send_msg(sender: str, recipient: str, coins: Coins) -> bank_tx.MsgSend:
    return bank_tx.MsgSend(from_address=sender, to_address=recipient, amount=coins.to_proto())


def address_of(key: secp256k1.PrivateKey) -> str:
    return bech32.encode(secp256k1.address_bytes(key.public_key))


def query_account(rpc: CometRPC, address: str) -> auth_pb2.BaseAccount:
    """The account's number and sequence from the chain, through ABCI query."""
    reply = rpc.abci_query(
        "/cosmos.auth.v1beta1.Query/Account", auth_query.QueryAccountRequest(address=address).SerializeToString()
    )
    if reply.get("code"):
        raise RPCError(reply.get("log", "account query failed"))
    account = auth_pb2.BaseAccount()
    auth_query.QueryAccountResponse.FromString(reply["value"]).account.Unpack(account)
    return account
