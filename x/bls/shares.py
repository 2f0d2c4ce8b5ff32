"""This node's checks of the BLS shares in vote extensions (x/bls README, "Checking shares"): node-local state
(verdicts, suspects), never part of a state transition.

CometBFT asks VerifyVoteExtension about one precommit at a time and needs the answer at once, and counts an
accepted vote towards the commit; a share can only be proven valid by a pairing check (~1.5 ms), so checking
each one costs (V - 1) of them per height on every node. Two modes (``[modules.bls] share_checks``):

* ``eager``: every share is verified before its vote is accepted, so every vote that can complete a commit
  carries a valid share and the next proposer always has > 2/3 of the power in valid shares.
* ``deferred``: a well-formed share (a subgroup point; the cheap part of a check) is accepted, and the
  height's accepted shares are verified together, once, in a randomized batch (``bls.batch_verify``), split
  in halves where it fails: at the proposer's PrepareProposal (which then certifies only valid shares), or
  else when a share of the next height comes. A validator caught with a bad share is a suspect: its shares
  are verified eagerly from then on. The cost: until it is caught, a bad share counts towards this node's
  commit, so this node's last commit may hold <= 2/3 of the power in valid shares when the commit just
  reached 2/3 with it and no more precommits came in before the next height's proposal (timeout_commit);
  this node then cannot certify that height as proposer, and that round passes to the next proposer.

Either way a share is verified once (CometBFT asks again for the same vote from each peer that relays it).
"""

from __future__ import annotations

from collections.abc import Sequence

from sdk.crypto import bls

MODES = ("deferred", "eager")
"""The first is the default: a height's checks in ~1/6 of the CPU, at the price described above."""
KEPT_MESSAGES = 2
"""Heights whose verdicts are kept: the one being voted and the one the next proposal certifies."""

Share = tuple[bytes, bytes]
"""(public key, share)"""


class ShareChecks:
    """Verdicts on (key, share) per signed message; ``None`` for a share accepted but not verified yet."""

    def __init__(self, mode: str = MODES[0]) -> None:
        if mode not in MODES:
            raise ValueError(f"share_checks must be one of {MODES}, got {mode!r}")
        self.mode = mode
        self.suspects: set[bytes] = set()
        self.verdicts: dict[bytes, dict[Share, bool | None]] = {}
        self.senders: dict[bytes, set[bytes]] = {}
        """Per message, the keys whose share was looked at: a second, other share of one key is checked at
        once (an honest signer has one share per message), so a batch holds at most one share per key."""

    def admit(self, key: bytes, message: bytes, share: bytes) -> bool:
        """VerifyVoteExtension's answer for ``key``'s ``share`` of ``message``."""
        verdicts = self._of(message)
        if (key, share) in verdicts:
            return verdicts[(key, share)] is not False
        if not bls.is_signature(share):
            return False
        senders = self.senders[message]
        if self.mode == "deferred" and key not in self.suspects and key not in senders:
            senders.add(key)
            verdicts[(key, share)] = None
            return True
        senders.add(key)
        return self._record(verdicts, [(key, share)], [bls.verify(key, message, share)])[0]

    def vouch(self, key: bytes, message: bytes, share: bytes) -> None:
        """This node's own share (ExtendVote signed it): valid without a check."""
        self._of(message)[(key, share)] = True

    def settle(self, message: bytes, shares: Sequence[Share]) -> list[bool]:
        """Whether each of ``shares`` is valid, having verified, in one batch with the ones not verified yet of
        ``message``, those of them without a verdict."""
        verdicts = self._of(message)
        unknown = [s for s, verdict in verdicts.items() if verdict is None]
        unknown += [s for s in dict.fromkeys(shares) if s not in verdicts]
        malformed = {s for s in unknown if not bls.is_signature(s[1])}  # late shares: CometBFT checked none
        formed = [s for s in unknown if s not in malformed]
        self._record(verdicts, list(malformed), [False] * len(malformed))
        self._record(verdicts, formed, _verify(message, formed))
        return [verdicts[s] is True for s in shares]

    def settle_pending(self) -> None:
        """Verify every share accepted and not verified yet (a new height's shares are coming)."""
        for message, verdicts in list(self.verdicts.items()):
            if None in verdicts.values():
                self.settle(message, [])

    def _of(self, message: bytes) -> dict[Share, bool | None]:
        if message not in self.verdicts:
            self.settle_pending()
            self.verdicts[message], self.senders[message] = {}, set()
            for old in list(self.verdicts)[:-KEPT_MESSAGES]:
                del self.verdicts[old], self.senders[old]
        return self.verdicts[message]

    def _record(self, verdicts: dict[Share, bool | None], shares: Sequence[Share], valid: list[bool]) -> list[bool]:
        for share, ok in zip(shares, valid):
            verdicts[share] = ok
            if not ok:
                self.suspects.add(share[0])
        return valid


def _verify(message: bytes, shares: Sequence[Share]) -> list[bool]:
    """Each share's validity: the whole list in one batch, and the halves of a list that fails."""
    if not shares:
        return []
    if bls.batch_verify([key for key, _ in shares], message, [share for _, share in shares]):
        return [True] * len(shares)
    if len(shares) == 1:
        return [False]
    half = len(shares) // 2
    return _verify(message, shares[:half]) + _verify(message, shares[half:])
