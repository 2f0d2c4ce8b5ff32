"""x/inference's error codes (codespace ``inference``)."""

from __future__ import annotations

from sdk.errors import register

CODESPACE = "inference"
ErrInvalidModel = register(CODESPACE, 2, "invalid model")
ErrUnknownModel = register(CODESPACE, 3, "unknown model")
ErrInvalidNode = register(CODESPACE, 4, "invalid ml node")
ErrNotHost = register(CODESPACE, 5, "not a host")
ErrUnknownNode = register(CODESPACE, 6, "unknown ml node")
ErrInvalidSignature = register(CODESPACE, 7, "invalid request signature")
ErrTimestamp = register(CODESPACE, 8, "request timestamp outside the window")
ErrDuplicate = register(CODESPACE, 9, "inference already started")
ErrFeeTooLow = register(CODESPACE, 10, "fee per token below the model's price")
ErrNotServing = register(CODESPACE, 11, "executor does not serve the model")
ErrMaxTokens = register(CODESPACE, 12, "max tokens out of range")
ErrUnknownInference = register(CODESPACE, 13, "unknown inference")
ErrNotExecutor = register(CODESPACE, 14, "not the executor")
ErrTooManyTokens = register(CODESPACE, 15, "token counts out of range")
ErrNotStarted = register(CODESPACE, 16, "inference is not started")
ErrRequesterMismatch = register(CODESPACE, 17, "requester does not match its public key")
ErrInvalidInference = register(CODESPACE, 18, "invalid inference message")
ErrNotTA = register(CODESPACE, 19, "not the inference's transfer agent")
ErrExecutorWindow = register(CODESPACE, 20, "the executor's window is open")
ErrInvalidRelease = register(CODESPACE, 21, "invalid release")
ErrRunUnfinished = register(CODESPACE, 22, "training run is not finished")
ErrRunInvalid = register(CODESPACE, 23, "training run's final round has an invalid checkpoint")
ErrWeightsMismatch = register(CODESPACE, 24, "weights differ from the training run's final global weights")
