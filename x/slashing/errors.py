"""x/slashing's error codes: the Cosmos SDK's (codespace ``slashing``), which wallets already know."""

from __future__ import annotations

from sdk.errors import register

ErrNoValidatorForAddress = register("slashing", 2, "address is not associated with any known validator")
ErrValidatorJailed = register("slashing", 4, "validator still jailed; cannot be unjailed")
ErrValidatorNotJailed = register("slashing", 5, "validator not jailed; cannot be unjailed")
ErrSelfDelegationTooLowToUnjail = register("slashing", 7, "validator's collateral is too low to unjail")
