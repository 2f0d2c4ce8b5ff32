"""x/sprint's error codes (codespace ``sprint``): each refusal of a commitment or a validation has its own."""

from __future__ import annotations

from sdk.errors import register

ErrNotHost = register("sprint", 2, "not a registered host")
ErrWrongStage = register("sprint", 3, "not in the stage this message belongs to")
ErrWrongEpoch = register("sprint", 4, "not the current epoch")
ErrParamsHash = register("sprint", 5, "race params hash differs from the chain's")
ErrEmptyCommitment = register("sprint", 6, "a commitment must hold at least one proof")
ErrBadRoot = register("sprint", 7, "root must be 32 bytes")
ErrCountShrinks = register("sprint", 8, "a later commitment may not hold fewer proofs")
ErrNoPubkey = register("sprint", 9, "the host's account has no public key")
ErrNotValidator = register("sprint", 10, "the sender holds no power in the validator set")
ErrSelfValidation = register("sprint", 11, "a host may not validate itself")
ErrDuplicateValidation = register("sprint", 12, "this validator already validated this host in this epoch")
ErrNoCommitment = register("sprint", 13, "the host has no commitment in this epoch")
ErrBadSamples = register("sprint", 14, "samples must equal the params' samples")
ErrBadFailures = register("sprint", 15, "failures may not exceed samples")
