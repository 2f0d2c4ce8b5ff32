"""Registered, numbered errors: a failing transaction reports a stable (codespace, code) and a log.

Numbers in the ``sdk`` codespace follow the Cosmos SDK's ``types/errors`` so that wallets that already
understand Cosmos codes read ours the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

_REGISTRY: dict[tuple[str, int], ErrorDef] = {}


@dataclass(frozen=True)
class ErrorDef:
    """One registered error kind; ``wrap`` makes a raisable error with context."""

    codespace: str
    code: int
    description: str

    def wrap(self, detail: str = "") -> ABCIError:
        return ABCIError(self, detail)


class ABCIError(Exception):
    """An error that becomes an ABCI result code and log, never a crash."""

    def __init__(self, kind: ErrorDef, detail: str = "") -> None:
        self.kind = kind
        self.detail = detail
        super().__init__(self.log)

    @property
    def codespace(self) -> str:
        return self.kind.codespace

    @property
    def code(self) -> int:
        return self.kind.code

    @property
    def log(self) -> str:
        return f"{self.detail}: {self.kind.description}" if self.detail else self.kind.description


def register(codespace: str, code: int, description: str) -> ErrorDef:
    """Register an error once per (codespace, code); code 0 and 1 are reserved (ok, internal)."""
    if code <= 1:
        raise ValueError(f"error code {code} is reserved")
    key = (codespace, code)
    if key in _REGISTRY:
        raise ValueError(f"error {codespace}/{code} registered twice")
    _REGISTRY[key] = ErrorDef(codespace, code, description)
    return _REGISTRY[key]


SDK = "sdk"
ErrTxDecode = register(SDK, 2, "tx parse error")
ErrInvalidSequence = register(SDK, 3, "invalid sequence")
ErrUnauthorized = register(SDK, 4, "unauthorized")
ErrInsufficientFunds = register(SDK, 5, "insufficient funds")
ErrUnknownRequest = register(SDK, 6, "unknown request")
ErrInvalidAddress = register(SDK, 7, "invalid address")
ErrInvalidPubKey = register(SDK, 8, "invalid pubkey")
ErrUnknownAddress = register(SDK, 9, "unknown address")
ErrInvalidCoins = register(SDK, 10, "invalid coins")
ErrOutOfGas = register(SDK, 11, "out of gas")
ErrInsufficientFee = register(SDK, 13, "insufficient fee")
ErrMemoTooLarge = register(SDK, 12, "memo too large")
ErrTooManySignatures = register(SDK, 15, "maximum number of signatures exceeded")
ErrNoSignatures = register(SDK, 16, "no signatures supplied")
ErrInvalidRequest = register(SDK, 18, "invalid request")
ErrInvalidChainID = register(SDK, 28, "tx intended signer does not match the given signer")
ErrTxTimeoutHeight = register(SDK, 30, "tx timeout height")
ErrUnknownExtensionOptions = register(SDK, 31, "unknown extension options")
ErrWrongSequence = register(SDK, 32, "incorrect account sequence")
ErrNotFound = register(SDK, 38, "key not found")
