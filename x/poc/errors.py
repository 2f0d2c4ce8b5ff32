"""x/poc's error codes (codespace ``poc``): each refusal of a verdict has its own."""

from __future__ import annotations

from sdk.errors import register

ErrUnknownInference = register("poc", 2, "no validation record for this inference")
ErrNotDrawn = register("poc", 3, "the inference's draw has not happened yet")
ErrNotSelected = register("poc", 4, "the inference was not selected for validation")
ErrNotAssigned = register("poc", 5, "the sender is not the inference's drawn validator")
ErrAlreadyValidated = register("poc", 6, "the inference already has a verdict")
ErrWindowClosed = register("poc", 7, "the validation window is over")
ErrBadScore = register("poc", 8, "score must be in parts per million, 0 … 1,000,000")
ErrBadVerdict = register("poc", 9, "verdict must be match or mismatch")
ErrBadInferenceId = register("poc", 10, "inference id must be 32 bytes")
ErrScoreBelowThreshold = register("poc", 11, "a match must score at least the model's verify threshold")
