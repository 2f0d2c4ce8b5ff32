"""The node's BLS key file, ``<home>/config/bls_key.json``, next to CometBFT's priv_validator_key.json.

    {"secret_key": HEX(32), "public_key": HEX(48), "proof_of_possession": HEX(96)}

All three are lowercase hex. The secret is ``bls.keygen(os.urandom(32))``; the file is created once
(``gonkad init``, mode 0600) and never replaced by these functions. A secret, so never in state.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from sdk.crypto import bls

FILE_NAME = "bls_key.json"


def key_file(home: Path) -> Path:
    return Path(home) / "config" / FILE_NAME


def key_document(secret: bytes) -> dict[str, str]:
    return {
        "secret_key": secret.hex(),
        "public_key": bls.public_key(secret).hex(),
        "proof_of_possession": bls.pop_prove(secret).hex(),
    }


def create_key_file(home: Path, seed: bytes | None = None) -> bool:
    """Write a fresh key file unless one exists; True if it was written. ``seed``: 32+ bytes (default
    ``os.urandom(32)``)."""
    path = key_file(home)
    if path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(key_document(bls.keygen(seed if seed is not None else os.urandom(32))), indent=2) + "\n"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as out:
        out.write(text)
    return True


def load_secret(home: Path) -> bytes:
    """The secret key of the home's key file, checked against the public key and proof it lists."""
    return read_secret(key_file(home))


def read_secret(path: Path) -> bytes:
    """The secret key of the key file ``path``, checked against the public key and proof it lists."""
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist; run `gonkad init` first")
    try:
        doc = json.loads(path.read_text())
        secret = bytes.fromhex(doc["secret_key"])
        if key_document(secret) != {k: doc.get(k) for k in ("secret_key", "public_key", "proof_of_possession")}:
            raise ValueError("its public key or proof does not match its secret key")
    except (KeyError, TypeError, json.JSONDecodeError, bls.BlsError, ValueError) as exc:
        raise ValueError(f"{path} is not a valid BLS key file: {exc}") from None
    return secret


def public_info(home: Path) -> dict[str, str]:
    """What ``gonkad keys bls show`` prints: the public key and proof of possession, hex."""
    secret = load_secret(home)
    doc = key_document(secret)
    return {"public_key": doc["public_key"], "proof_of_possession": doc["proof_of_possession"]}
