"""x/gov's errors: the Cosmos SDK's ``x/gov`` codes (wallets know them), plus Gonka's validator-only vote.

``gov/13`` (``ErrInvalidSigner``) is registered in ``sdk/params.py``: every module's MsgUpdateParams uses it.
"""

from __future__ import annotations

from sdk.errors import register
from sdk.params import ErrInvalidSigner

GOV = "gov"
ErrUnknownProposal = register(GOV, 2, "unknown proposal")
ErrInactiveProposal = register(GOV, 3, "inactive proposal")
ErrInvalidVote = register(GOV, 7, "invalid vote option")
ErrInvalidGenesis = register(GOV, 8, "invalid genesis state")
ErrUnroutableProposalMsg = register(GOV, 10, "proposal message not recognized by router")
ErrInvalidProposalMsg = register(GOV, 12, "invalid proposal message")
ErrMetadataTooLong = register(GOV, 15, "metadata too long")
ErrMinDepositTooSmall = register(GOV, 16, "minimum deposit is too small")
ErrInvalidProposer = register(GOV, 18, "invalid proposer")
ErrVotingPeriodEnded = register(GOV, 20, "voting period already ended")
ErrInvalidProposal = register(GOV, 21, "invalid proposal")
ErrSummaryTooLong = register(GOV, 22, "summary too long")
ErrInvalidDepositDenom = register(GOV, 23, "invalid deposit denom")
ErrNotValidator = register(GOV, 100, "only accounts with power in the validator set may vote")
"""Gonka's own: governance is by the validator set's voting power (x/stake), not by delegations."""

__all__ = [name for name in dir() if name.startswith("Err")] + ["ErrInvalidSigner"]
