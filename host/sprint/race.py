"""``RaceDuty``: the host's race in each epoch's ``STAGE_RACE`` (host/README.md, "The race duties"): nonce chunks
on its ML node with its own key from nonce 0, the proofs kept, a ``MsgSprintCommit`` whenever their count grew
(the chain lets a later commit replace an earlier one as large or larger), until a margin before the stage ends.
Each epoch's race is journalled (``RaceJournal``), so a restart resumes it."""

from __future__ import annotations

import logging
import threading

from host.sprint.chain import STAGE_RACE, EpochNow, SprintChain
from host.sprint.config import SprintConfig
from host.sprint.counts import SprintCounts
from host.sprint.faults import committed_list, race_pubkey
from host.sprint.journal import Commit, EpochRace, RaceJournal
from host.sprint.node import NodeRace, Proof, RaceNode
from x.sprint.client.queries import commit_message

logger = logging.getLogger("gonka.host.sprint")


class RaceDuty:
    """One host's races; ``step`` runs one chunk (and a commit when the count grew)."""

    def __init__(
        self, chain: SprintChain, node: RaceNode, config: SprintConfig, pubkey: bytes, counts: SprintCounts
    ) -> None:
        self.chain, self.node, self.config, self.counts = chain, node, config, counts
        self.pubkey = pubkey
        self.journal = RaceJournal(config.home)
        self.races: dict[int, EpochRace] = {}
        self.refused_epochs: set[int] = set()
        self.lock = threading.Lock()
        """Held while an epoch's race changes, and while the openings read it."""

    def racing(self, now: EpochNow) -> bool:
        """Whether ``now`` is still early enough in a race stage for a commit sent now to land in it."""
        return (
            now.stage == STAGE_RACE
            and now.epoch >= 1
            and now.height + self.config.margin_blocks < now.next_stage_height
        )

    def step(self, now: EpochNow) -> bool:
        """One chunk of ``now``'s epoch, and a commit when the count grew; False when there is nothing to do."""
        if not self.racing(now) or now.epoch in self.refused_epochs:
            return False
        node_race = self.node.race()
        if not self._same_race(now.epoch, node_race.params_hash):
            return False
        seed = self.chain.race(now.epoch).seed
        if not seed:
            return False  # the chain fixes the seed at the stage's first block: next poll
        race = self.epoch_race(now.epoch, seed)
        chunk = self.chunk_size(race)
        if chunk == 0:
            return False  # the epoch's budget is raced
        proofs = self.node.run(seed, bytes.fromhex(race.pubkey), race.next_nonce, chunk)
        with self.lock:
            race.proofs += proofs
            race.next_nonce += chunk
        self.counts.nonces_raced += chunk
        self.counts.proofs = len(race.proofs)
        listed = committed_list(race.proofs, self.config.fault, node_race.r_target)
        if len(listed) > self._floor(race):
            self._commit(race, listed, node_race)
        return True

    def chunk_size(self, race: EpochRace) -> int:
        """The next chunk: ``chunk`` nonces, fewer at the end of the epoch's ``max_nonces`` budget."""
        budget = self.config.max_nonces
        return self.config.chunk if budget is None else max(0, min(self.config.chunk, budget - race.next_nonce))

    def _same_race(self, epoch: int, node_hash: bytes) -> bool:
        """Whether the ML node races the chain's race; logged once per epoch when not (a commit would be refused)."""
        chain_hash = self.chain.params().race_params_hash
        if chain_hash == node_hash:
            return True
        self.refused_epochs.add(epoch)
        reason = (
            f"epoch {epoch}: the ML node's race params hash {node_hash.hex()} is not the chain's {chain_hash.hex()}"
        )
        logger.warning("%s: not racing", reason)
        self.counts.skip(reason)
        return False

    def epoch_race(self, epoch: int, seed: bytes) -> EpochRace:
        """The epoch's race so far: in memory, else its journal (a restart), else a new one."""
        race = self.races.get(epoch) or self.journal.load(epoch)
        if race is None or race.seed != seed.hex():
            race = EpochRace(epoch, seed.hex(), race_pubkey(self.pubkey, self.config.fault).hex())
            logger.info("epoch %d: racing, seed %s, %d nonces per chunk", epoch, seed.hex(), self.config.chunk)
        elif epoch not in self.races:
            logger.info("epoch %d: race resumed from its journal at nonce %d", epoch, race.next_nonce)
        self.races[epoch] = race
        self._prune(epoch)
        return race

    def _prune(self, epoch: int) -> None:
        """Forget races older than the previous epoch's, as the chain does (their openings are never asked for)."""
        with self.lock:
            for old in [e for e in self.races if e < epoch - 1]:
                del self.races[old]
        for path in self.journal.home.glob("sprint-*.json"):
            number = path.stem.removeprefix("sprint-")
            if number.isdigit() and int(number) < epoch - 1:
                path.unlink(missing_ok=True)

    def _floor(self, race: EpochRace) -> int:
        """The count a commit must exceed: the largest this host committed, in its journal or on chain."""
        own = self.chain.own_commitment(race.epoch)
        return max(race.committed_count(), own.count if own is not None else 0)

    def _commit(self, race: EpochRace, listed: list[Proof], node_race: NodeRace) -> None:
        now = self.chain.now()
        if not self.racing(now) or now.epoch != race.epoch:
            return  # the stage ended while the chunk ran
        body = self.node.commit(bytes.fromhex(race.seed), bytes.fromhex(race.pubkey), listed)
        entry = Commit(body["root"], body["count"], len(race.proofs))
        with self.lock:
            race.commits.append(entry)
            self.journal.save(race)  # before the send: the list behind a root that may land is never lost
        message = commit_message(
            self.chain.address, race.epoch, bytes.fromhex(entry.root), entry.count, node_race.params_hash
        )
        entry.tx = self.chain.send([message], self.config.commit_gas)
        entry.height = now.height
        with self.lock:
            self.journal.save(race)
        self.counts.commits += 1
        self.counts.last_commit = {"epoch": race.epoch, "count": entry.count, "height": entry.height, "tx": entry.tx}
        logger.info("epoch %d: committed %d leaves (root %s, tx %s)", race.epoch, entry.count, entry.root, entry.tx)

    def committed(self, epoch: int, root: bytes) -> tuple[EpochRace, Commit] | None:
        """The race and the commit behind ``root`` (the chain's record of this host), from memory or journal."""
        with self.lock:
            race = self.races.get(epoch) or self.journal.load(epoch)
            entry = race.commit_of(root) if race is not None else None
            return (race, entry) if race is not None and entry is not None else None
