"""BIP-39 mnemonics and BIP-32 derivation of secp256k1 keys, on the Cosmos path m/44'/118'/0'/0/0.

The mnemonic side (wordlist, checksum, PBKDF2 seed) comes from the reference ``mnemonic`` package;
CKDpriv is written out here so that the exact derivation Cosmos wallets use is visible and tested.
"""

from __future__ import annotations

import hashlib
import hmac
import re

import coincurve
from mnemonic import Mnemonic

from sdk.crypto import secp256k1

COSMOS_COIN_TYPE = 118
DEFAULT_HD_PATH = "m/44'/118'/0'/0/0"
HARDENED = 0x8000_0000
MNEMONIC_WORDS = (12, 15, 18, 21, 24)
_MAX_DEPTH = 255  # the depth is one byte in BIP-32 serialisation
_COMPONENT = re.compile(r"(\d+)(['hH]?)")
_english = Mnemonic("english")


def hd_path(account: int = 0, index: int = 0, coin_type: int = COSMOS_COIN_TYPE) -> str:
    """The BIP-44 path of address ``index`` of ``account``, the form Cosmos' --account/--index build."""
    return f"m/44'/{coin_type}'/{account}'/0/{index}"


def parse_path(path: str) -> list[int]:
    """``m/44'/118'/0'/0/0`` (also ``h``/``H`` for hardened, ``m/`` optional) to child indexes."""
    parts = path.strip().split("/")
    if parts[0] == "m":
        parts = parts[1:]
    if parts == [""] or len(parts) > _MAX_DEPTH:
        raise ValueError(f"invalid HD path {path!r}")
    indexes = []
    for part in parts:
        match = _COMPONENT.fullmatch(part)
        if match is None or int(match.group(1)) >= HARDENED:
            raise ValueError(f"invalid HD path {path!r}: bad component {part!r}")
        indexes.append(int(match.group(1)) + (HARDENED if match.group(2) else 0))
    return indexes


def generate_mnemonic(words: int = 24) -> str:
    """A fresh mnemonic from the OS CSPRNG (24 words = 256 bits of entropy, the Cosmos default)."""
    if words not in MNEMONIC_WORDS:
        raise ValueError(f"a mnemonic has {', '.join(map(str, MNEMONIC_WORDS))} words, not {words}")
    return _english.generate(strength=words * 32 // 3)


def normalize_mnemonic(mnemonic: str) -> str:
    """Collapse whitespace and check word count, words and checksum; ValueError says which failed."""
    words = mnemonic.split()
    if len(words) not in MNEMONIC_WORDS:
        raise ValueError(f"invalid mnemonic: {len(words)} words, expected 12, 15, 18, 21 or 24")
    unknown = [w for w in words if w not in _english.wordlist]
    if unknown:
        raise ValueError(f"invalid mnemonic: {unknown[0]!r} is not a BIP-39 English word")
    phrase = " ".join(words)
    if not _english.check(phrase):
        raise ValueError("invalid mnemonic: bad checksum")
    return phrase


def mnemonic_to_seed(mnemonic: str, bip39_passphrase: str = "") -> bytes:
    """The 64-byte BIP-39 seed (PBKDF2-HMAC-SHA512, 2048 rounds) of a checked mnemonic."""
    return Mnemonic.to_seed(normalize_mnemonic(mnemonic), bip39_passphrase)


def _hmac_sha512(key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, hashlib.sha512).digest()


def master_key(seed: bytes) -> tuple[bytes, bytes]:
    """(secret, chain code) of the BIP-32 master node."""
    digest = _hmac_sha512(b"Bitcoin seed", seed)
    if not 0 < int.from_bytes(digest[:32], "big") < secp256k1.ORDER:
        raise ValueError("invalid BIP-32 master key for this seed")
    return digest[:32], digest[32:]


def ckd_priv(secret: bytes, chain_code: bytes, index: int) -> tuple[bytes, bytes]:
    """BIP-32 CKDpriv: hardened children hash the private key, normal ones the compressed public key.

    An out-of-range I_L or a zero child key is rejected (ValueError) as the spec requires, rather
    than silently producing a key other wallets would not derive.
    """
    if not 0 <= index < 2**32:
        raise ValueError(f"child index {index} out of range")
    if index & HARDENED:
        data = b"\x00" + secret
    else:
        data = coincurve.PrivateKey(secret).public_key.format(compressed=True)
    digest = _hmac_sha512(chain_code, data + index.to_bytes(4, "big"))
    tweak = int.from_bytes(digest[:32], "big")
    child = (tweak + int.from_bytes(secret, "big")) % secp256k1.ORDER
    if tweak >= secp256k1.ORDER or child == 0:
        raise ValueError(f"invalid BIP-32 child key at index {index}; use another index")
    return child.to_bytes(32, "big"), digest[32:]


def derive_from_seed(seed: bytes, path: str) -> tuple[bytes, bytes]:
    """(secret, chain code) at ``path`` below the master node of ``seed``."""
    secret, chain_code = master_key(seed)
    for index in parse_path(path):
        secret, chain_code = ckd_priv(secret, chain_code, index)
    return secret, chain_code


def derive_private_key(mnemonic: str, bip39_passphrase: str = "", path: str = DEFAULT_HD_PATH) -> secp256k1.PrivateKey:
    """The account key a Cosmos wallet gets from this mnemonic, passphrase and path."""
    secret, _ = derive_from_seed(mnemonic_to_seed(mnemonic, bip39_passphrase), path)
    return secp256k1.PrivateKey(secret)
