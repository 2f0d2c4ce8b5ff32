"""x/bls's error codes (codespace ``bls``)."""

from __future__ import annotations

from sdk.errors import register

CODESPACE = "bls"
ErrInvalidPublicKey = register(CODESPACE, 2, "invalid BLS public key")
ErrInvalidProof = register(CODESPACE, 3, "invalid BLS proof of possession")
ErrNotHost = register(CODESPACE, 4, "operator is not a host")
ErrKeyUsed = register(CODESPACE, 5, "BLS key already registered by another host")
ErrNoKey = register(CODESPACE, 6, "no BLS key registered")
