"""x/learning's registered errors (codespace ``learning``): one code per rule, so a client can tell them apart."""

from __future__ import annotations

from sdk.errors import register

CODESPACE = "learning"
ErrInvalidHash = register(CODESPACE, 2, "hash must be 32 bytes")
ErrInvalidRun = register(CODESPACE, 3, "invalid training run")
ErrRunLimits = register(CODESPACE, 4, "training run exceeds the module params")
ErrRunNotFound = register(CODESPACE, 5, "training run not found")
ErrNotWorker = register(CODESPACE, 6, "signer is not a worker of the run")
ErrRoundOutOfRange = register(CODESPACE, 7, "round is outside the run")
ErrCheckpointExists = register(CODESPACE, 8, "checkpoint already committed")
ErrConfigMismatch = register(CODESPACE, 9, "config hash differs from the run's")
ErrStartMismatch = register(CODESPACE, 10, "start weights do not chain from the agreed global state")
ErrGlobalMismatch = register(CODESPACE, 11, "global state differs from the round's first commit")
ErrCheckpointNotFound = register(CODESPACE, 12, "checkpoint not found")
ErrVerdictExists = register(CODESPACE, 13, "verdict already submitted")
ErrReasonTooLong = register(CODESPACE, 14, "verdict reason too long")
ErrSelfVerdict = register(CODESPACE, 15, "a worker cannot judge its own checkpoint")
ErrNotHost = register(CODESPACE, 16, "worker is not a registered host with collateral")
ErrNotDrawn = register(CODESPACE, 17, "verifier is not drawn for this checkpoint")
ErrSettled = register(CODESPACE, 18, "checkpoint is already settled")
ErrNotValid = register(CODESPACE, 19, "checkpoint is not valid")
ErrAlreadyPaid = register(CODESPACE, 20, "reward already paid")
ErrRunFinished = register(CODESPACE, 21, "training run is finished")
