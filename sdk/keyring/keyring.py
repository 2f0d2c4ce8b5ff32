"""A Cosmos-like keyring: one JSON record per key under ``<home>/keyring-<backend>/``.

Backends: ``test`` keeps the secret in clear (localnets, CI); ``file`` encrypts it with AES-256-GCM
under a scrypt key from the keyring passphrase, with a fresh salt and nonce per key. Name, address
and public key stay readable so ``list``/``show`` need no passphrase; they are bound to the
ciphertext as associated data, so an edited record fails to decrypt instead of yielding a wrong key.
The mnemonic is never stored: ``add`` returns it once, as ``gonkad keys add`` prints it once.
"""

from __future__ import annotations

import base64
import json
import os
import re
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from sdk.crypto import bech32, secp256k1
from sdk.keyring import hd

BACKENDS = ("test", "file")
KEY_TYPE = "local"
PUBKEY_TYPE_URL = "/cosmos.crypto.secp256k1.PubKey"
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**15, 8, 1  # 32 MiB and ~0.15 s: the price of each guess
ARMOR_BEGIN = "-----BEGIN GONKA PRIVATE KEY-----"
ARMOR_END = "-----END GONKA PRIVATE KEY-----"
_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
_VERIFIER_FILE = "keyhash"  # no .json suffix, so never listed as a key
_VERIFIER_PLAINTEXT = b"gonka keyring passphrase check"
_EXPORT_AAD = b"gonka-export:secp256k1"


class KeyringError(Exception):
    """A user-facing keyring failure with a one-line message."""


@dataclass(frozen=True)
class KeyInfo:
    """The public part of a key: what list/show print."""

    name: str
    address: str
    pubkey: bytes

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of ``keys show -o json`` (Cosmos style, pubkey as an Any)."""
        return {
            "name": self.name,
            "type": KEY_TYPE,
            "address": self.address,
            "pubkey": {"@type": PUBKEY_TYPE_URL, "key": base64.b64encode(self.pubkey).decode()},
        }


def _scrypt_key(passphrase: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return Scrypt(salt=salt, length=32, n=n, r=r, p=p).derive(passphrase.encode())


def _seal(passphrase: str, plaintext: bytes, aad: bytes) -> dict[str, Any]:
    """Encrypt under a new salt and nonce; the KDF parameters travel with the ciphertext."""
    salt, nonce = os.urandom(16), os.urandom(12)
    ciphertext = AESGCM(_scrypt_key(passphrase, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)).encrypt(nonce, plaintext, aad)
    return {
        "cipher": "aes-256-gcm",
        "kdf": "scrypt",
        "n": SCRYPT_N,
        "r": SCRYPT_R,
        "p": SCRYPT_P,
        "salt": salt.hex(),
        "nonce": nonce.hex(),
        "ciphertext": ciphertext.hex(),
    }


def _open_sealed(passphrase: str, sealed: dict[str, Any], aad: bytes) -> bytes:
    """Decrypt; raises InvalidTag for a wrong passphrase (or altered data), never returns garbage."""
    key = _scrypt_key(passphrase, bytes.fromhex(sealed["salt"]), sealed["n"], sealed["r"], sealed["p"])
    return AESGCM(key).decrypt(bytes.fromhex(sealed["nonce"]), bytes.fromhex(sealed["ciphertext"]), aad)


def _write_private(path: Path, data: str) -> None:
    """Create ``path`` (mode 0600) atomically; FileExistsError if present, so two adds cannot both win."""
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")  # mode 0600
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.link(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def validate_name(name: str) -> None:
    """Names become file names, so only a safe character set is accepted."""
    if not _NAME.fullmatch(name):
        raise KeyringError(f"invalid key name {name!r}: use 1-64 of A-Z a-z 0-9 . _ -")


class Keyring:
    """Keys of one backend under one home.

    The file backend needs ``passphrase`` only to add keys or read secrets. It may be a callable
    (a prompt), called once at the first such use, so that ``list``/``show`` never ask for it.
    """

    def __init__(self, home: Path, backend: str, passphrase: str | Callable[[], str] | None = None) -> None:
        if backend not in BACKENDS:
            raise KeyringError(f"unknown keyring backend {backend!r}; use one of {', '.join(BACKENDS)}")
        self.backend = backend
        self.dir = Path(home) / f"keyring-{backend}"
        self._passphrase = passphrase
        if backend == "file" and isinstance(passphrase, str):
            self._check_passphrase(passphrase)

    @property
    def is_initialised(self) -> bool:
        """Whether a file keyring already has its passphrase (so a new one should be confirmed if not)."""
        return (self.dir / _VERIFIER_FILE).exists()

    def _check_passphrase(self, passphrase: str) -> None:
        if passphrase == "":
            raise KeyringError("the keyring passphrase must not be empty")
        if self.is_initialised:
            self._verify_passphrase(passphrase)

    def _verify_passphrase(self, passphrase: str) -> None:
        sealed = json.loads((self.dir / _VERIFIER_FILE).read_text())
        try:
            _open_sealed(passphrase, sealed, b"")
        except InvalidTag:
            raise KeyringError(f"wrong passphrase for keyring {self.dir}") from None

    def _need_passphrase(self) -> str:
        if callable(self._passphrase):
            passphrase = self._passphrase()
            self._check_passphrase(passphrase)
            self._passphrase = passphrase
        if self._passphrase is None:
            raise KeyringError("the file keyring backend needs a passphrase")
        return self._passphrase

    def _ensure_dir(self) -> None:
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.dir.chmod(0o700)
        if self.backend == "file" and not self.is_initialised:
            passphrase = self._need_passphrase()
            try:
                _write_private(self.dir / _VERIFIER_FILE, json.dumps(_seal(passphrase, _VERIFIER_PLAINTEXT, b"")))
            except FileExistsError:  # another process set the passphrase meanwhile: it must match
                self._verify_passphrase(passphrase)

    def _path(self, name: str) -> Path:
        validate_name(name)
        return self.dir / f"{name}.json"

    def _load(self, path: Path) -> tuple[KeyInfo, dict[str, Any]]:
        """Read a record and check its address matches its public key, so a damaged file is reported."""
        try:
            record = json.loads(path.read_text())
            info = KeyInfo(record["name"], record["address"], base64.b64decode(record["pubkey"], validate=True))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise KeyringError(f"key record {path} is unreadable: {exc}") from None
        if (
            info.name != path.stem
            or len(info.pubkey) != secp256k1.PUBKEY_LEN
            or info.address != bech32.encode(secp256k1.address_bytes(info.pubkey))
        ):
            raise KeyringError(f"key record {path} is corrupted")
        return info, record

    def _store(self, name: str, key: secp256k1.PrivateKey) -> KeyInfo:
        """Write a new record; refuses a taken name and an address already held under another name."""
        path = self._path(name)
        info = KeyInfo(name, bech32.encode(secp256k1.address_bytes(key.public_key)), key.public_key)
        if path.exists():
            raise KeyringError(f"key {name!r} already exists")
        for other in self.list():
            if other.address == info.address:
                raise KeyringError(f"address {info.address} is already in the keyring as key {other.name!r}")
        passphrase = self._need_passphrase() if self.backend == "file" else None
        self._ensure_dir()
        record: dict[str, Any] = {
            "name": name,
            "type": KEY_TYPE,
            "address": info.address,
            "pubkey": base64.b64encode(info.pubkey).decode(),
        }
        if passphrase is None:
            record["privkey"] = key.secret.hex()
        else:
            record["crypto"] = _seal(passphrase, key.secret, self._aad(info))
        try:
            _write_private(path, json.dumps(record, indent=2))
        except FileExistsError:
            raise KeyringError(f"key {name!r} already exists") from None
        return info

    @staticmethod
    def _aad(info: KeyInfo) -> bytes:
        return f"gonka-keyring:{info.name}:{info.address}".encode()

    def add(
        self, name: str, mnemonic: str | None = None, bip39_passphrase: str = "", hd_path: str = hd.DEFAULT_HD_PATH
    ) -> tuple[KeyInfo, str]:
        """Derive a key from ``mnemonic`` (a fresh 24-word one when None); returns it with the mnemonic."""
        validate_name(name)
        phrase = hd.generate_mnemonic() if mnemonic is None else mnemonic
        try:
            phrase = hd.normalize_mnemonic(phrase)
            key = hd.derive_private_key(phrase, bip39_passphrase, hd_path)
        except ValueError as exc:
            raise KeyringError(str(exc)) from None
        return self._store(name, key), phrase

    def recover(
        self, name: str, mnemonic: str, bip39_passphrase: str = "", hd_path: str = hd.DEFAULT_HD_PATH
    ) -> KeyInfo:
        """Re-create a key from its mnemonic."""
        return self.add(name, mnemonic, bip39_passphrase, hd_path)[0]

    def list(self) -> list[KeyInfo]:
        """All keys, sorted by name."""
        if not self.dir.is_dir():
            return []
        return [self._load(path)[0] for path in sorted(self.dir.glob("*.json"), key=lambda p: p.stem)]

    def get(self, name_or_address: str) -> KeyInfo:
        """A key by name, or else by its bech32 address."""
        if _NAME.fullmatch(name_or_address) and self._path(name_or_address).exists():
            return self._load(self._path(name_or_address))[0]
        for info in self.list():
            if info.address == name_or_address:
                return info
        raise KeyringError(f"key {name_or_address!r} not found in {self.dir}")

    def private_key(self, name: str) -> secp256k1.PrivateKey:
        """The signing key; the file backend decrypts it with the keyring passphrase."""
        info, record = self._load(self._existing(name))
        try:
            if self.backend == "file":
                secret = _open_sealed(self._need_passphrase(), record["crypto"], self._aad(info))
            else:
                secret = bytes.fromhex(record["privkey"])
            key = secp256k1.PrivateKey(secret)
        except InvalidTag:
            raise KeyringError(f"cannot decrypt key {name!r}: wrong passphrase or altered record") from None
        except (KeyError, TypeError, ValueError) as exc:
            raise KeyringError(f"key record {name!r} is unreadable: {exc}") from None
        if key.public_key != info.pubkey:
            raise KeyringError(f"key record {name!r} is corrupted: secret and public key differ")
        return key

    def _existing(self, name: str) -> Path:
        path = self._path(name)
        if not path.exists():
            raise KeyringError(f"key {name!r} not found in {self.dir}")
        return path

    def delete(self, name: str) -> None:
        """Remove the record; the key's mnemonic (or an export) is then the only way back."""
        self._existing(name).unlink()

    def export(self, name: str, export_passphrase: str) -> str:
        """The private key as an ASCII-armored block, encrypted under its own passphrase (scrypt + AES-GCM)."""
        if not export_passphrase:
            raise KeyringError("the export passphrase must not be empty")
        sealed = _seal(export_passphrase, self.private_key(name).secret, _EXPORT_AAD)
        headers = [f"{field}: {sealed[field]}" for field in ("kdf", "n", "r", "p", "salt", "nonce", "cipher")]
        body = textwrap.wrap(base64.b64encode(bytes.fromhex(sealed["ciphertext"])).decode(), 64)
        return "\n".join([ARMOR_BEGIN, "type: secp256k1", *headers, "", *body, ARMOR_END]) + "\n"

    def import_key(self, name: str, armored: str, export_passphrase: str) -> KeyInfo:
        """Store a key from an ``export`` block under ``name``."""
        validate_name(name)
        sealed = _parse_armor(armored)
        try:
            secret = _open_sealed(export_passphrase, sealed, _EXPORT_AAD)
        except InvalidTag:
            raise KeyringError("wrong passphrase for the exported key (or the block was altered)") from None
        return self._store(name, secp256k1.PrivateKey(secret))


def _parse_armor(armored: str) -> dict[str, Any]:
    """Headers and body of an export block, checked field by field."""
    lines = [line.strip() for line in armored.strip().splitlines()]
    if len(lines) < 3 or lines[0] != ARMOR_BEGIN or lines[-1] != ARMOR_END or "" not in lines:
        raise KeyringError(f"invalid armored key: expected a {ARMOR_BEGIN} block")
    blank = lines.index("")
    headers = dict(line.split(": ", 1) for line in lines[1:blank] if ": " in line)
    expected = {"type": "secp256k1", "kdf": "scrypt", "cipher": "aes-256-gcm"}
    for field, value in expected.items():
        if headers.get(field) != value:
            raise KeyringError(f"invalid armored key: {field} must be {value!r}")
    try:
        sealed: dict[str, Any] = {field: int(headers[field]) for field in ("n", "r", "p")}
        sealed.update(salt=bytes.fromhex(headers["salt"]).hex(), nonce=bytes.fromhex(headers["nonce"]).hex())
        sealed["ciphertext"] = base64.b64decode("".join(lines[blank + 1 : -1]), validate=True).hex()
    except (KeyError, ValueError) as exc:
        raise KeyringError(f"invalid armored key: {exc}") from None
    n, r, p = sealed["n"], sealed["r"], sealed["p"]
    if not (1 < n <= 2**20 and n & (n - 1) == 0 and 0 < r <= 32 and 0 < p <= 16):
        raise KeyringError("invalid armored key: scrypt parameters out of range")  # also bounds the work
    if len(sealed["nonce"]) != 24 or not sealed["salt"]:
        raise KeyringError("invalid armored key: bad salt or nonce")
    return sealed


def generate_test_keys(home: Path, names: list[str]) -> dict[str, str]:
    """Keys in the ``test`` backend for a localnet (validators, faucet): name -> address.

    Names that already exist keep their key, so a restarted localnet keeps its funded accounts.
    """
    keyring = Keyring(home, "test")
    existing = {info.name: info.address for info in keyring.list()}
    return {name: existing[name] if name in existing else keyring.add(name)[0].address for name in names}
