"""One worker process: join the run, then per round train, commit to a PoL record, exchange, step.

A round, as this worker sees it (``membership.py`` has the coordinator's side):

1. wait for the plan of ``r{round}a0``; if it needs a sync, rank 0 broadcasts the global weights and
   outer momentum (joiners and resumed workers load the global state before they train);
2. H inner AdamW steps from the global weights on this worker's own shard and data order;
3. PoL: hash the start and end weights, optimizer states, data order and config into a
   ``CheckpointRecord``, keep the replay data on disk, hand the record to the sink;
4. all-gather the compressed pseudo-gradients; report the outcome; on commit, average in fp32 and take
   the outer Nesterov step (every member the same), else redo the exchange in the next attempt;
5. save this worker's inner optimizer state for the next round and attest the new global state to the
   sink; rank 0 also writes the global checkpoint and evaluates it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist

from diloco import checkpoint
from diloco.chain import CHAIN_KEY, ChainRun, ChainSink
from diloco.checkpoint import CheckpointInfo, RunLayout, SegmentMeta
from diloco.compress import Compression
from diloco.config import JoinSettings, config_hash
from diloco.data import Corpus, data_order, load_corpus, shard, validation_batches
from diloco.inner import evaluate, initial_weights, inner_optimizer, inner_steps
from diloco.membership import CollectiveFailed, Member, Plan, RunSpec, collective, generation, store_client
from diloco.outer import GlobalModel, average
from diloco.pol import CheckpointRecord, JsonlSink, PoLSink, data_order_sha256
from mlnode.model import Transformer
from mlnode.weights import weights_sha256

log = logging.getLogger("diloco.participant")


@dataclass
class Contribution:
    """A worker's share of one round's exchange."""

    payload: torch.Tensor
    """The compressed pseudo-gradient."""
    stats: torch.Tensor
    """float64 [mean train loss, tokens, inner seconds]."""


class Participant:
    def __init__(
        self,
        member: Member,
        spec: RunSpec,
        layout: RunLayout,
        corpus: Corpus,
        device: torch.device,
        sink: PoLSink,
        test_fault: str | None = None,
    ) -> None:
        self.test_fault = test_fault
        self.member, self.run, self.config, self.spec = member, spec.run, spec.run.config, spec
        self.layout, self.corpus, self.device, self.sink = layout, corpus, device, sink
        self.backend = "nccl" if device.type == "cuda" else "gloo"
        self.model = Transformer(self.config.architecture()).to(device)
        self.optimizer = inner_optimizer(self.model, self.config)
        self.global_model = GlobalModel(
            {k: v.cpu() for k, v in self.model.state_dict().items()}, self.config.outer_lr, self.config.outer_momentum
        )
        self.compression = Compression(self.config.compression, self.config.int8_chunk)
        self.numel = sum(p.numel() for p in self.global_model.params.values())
        self.validation = validation_batches(corpus, self.config)
        self.index, self.holds_state, self.round_began = -1, False, 0.0
        self.pending: Contribution | None = None
        """Set from the end of this worker's inner steps until the exchange is committed."""
        self.gathered: list[Contribution] = []

    def run_rounds(self) -> None:
        round_number = self._join()
        gen = generation(round_number, 0)
        while True:
            plan = self.member.plan(gen)
            if plan.phase == "done":
                return
            rank = plan.rank_of(self.index)
            if rank is None:
                round_number = self._join()
                gen = generation(round_number, 0)
                continue
            ok = self._attempt(plan, rank)
            if self.member.report(gen, self.index, ok, self.pending is not None):
                self._finish(plan, rank)
                round_number, gen = plan.round + 1, generation(plan.round + 1, 0)
                self.member.ready(round_number, self.index)
            else:
                gen = generation(plan.round, plan.attempt + 1)

    def _join(self) -> int:
        """Get admitted; take this worker's inner state for that round from disk, or put it there."""
        admission = self.member.admit()
        self.index, self.holds_state, self.pending = admission.index, False, None
        path = self.layout.inner_file(admission.round, self.member.name)
        if path.exists():
            checkpoint.load_inner_state(self.optimizer, self.model, checkpoint.load_tensors(path))
        else:
            checkpoint.save_tensors(path, checkpoint.inner_state(self.optimizer, self.model))
        self.member.ready(admission.round, self.index)
        return admission.round

    def _attempt(self, plan: Plan, rank: int) -> bool:
        """One generation: sync and train (start phase), then exchange. False if a collective failed."""
        try:
            with self.member.group(plan, rank, self.backend, self.spec.timeouts.collective_timeout_s):
                if plan.phase == "start":
                    if plan.sync:
                        self._sync(plan, rank)
                    self._train(plan.round, rank)
                self._exchange()
            return True
        except CollectiveFailed as failure:
            log.warning("generation %s failed: %s", plan.generation, failure)
            return False

    def _sync(self, plan: Plan, rank: int) -> None:
        """Rank 0 sends the global weights and outer momentum; those without them take them."""
        if rank == 0 and not self.holds_state:
            weights, momentum = self._source_state(plan)
            self.global_model.load(weights, momentum)
            self.holds_state = True
        flat = torch.cat(
            [self.global_model.flat(self.global_model.weights()), self.global_model.flat(self.global_model.momentum())]
        ).to(self.device)
        with collective("broadcasting the global state"):
            dist.broadcast(flat, src=0)
        if not self.holds_state:
            weights, momentum = flat.cpu().split(self.numel)
            self.global_model.load(self.global_model.unflat(weights), self.global_model.unflat(momentum))
            self.holds_state = True
        if rank == 0 and not self.layout.info_file(plan.round).exists():
            self._publish_checkpoint(
                plan.round,
                plan.members,
                weights_sha256(self.global_model.weights()),
                weights_sha256(self.global_model.momentum()),
            )

    def _source_state(self, plan: Plan) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
        if plan.source == "checkpoint":
            return checkpoint.read_global(self.layout, plan.round)
        weights = initial_weights(self.config)
        return weights, {name: torch.zeros_like(value) for name, value in weights.items()}

    def _train(self, round_number: int, rank: int) -> None:
        """The inner steps and this round's PoL record."""
        self.round_began = time.perf_counter()
        start = self.global_model.weights()
        with torch.no_grad():
            for name, param in self.model.named_parameters():
                param.copy_(start[name])
        start_optimizer_hash = weights_sha256(checkpoint.inner_state(self.optimizer, self.model))
        data = shard(self.corpus, self.index, self.config.workers)
        starts = data_order(self.config, self.index, round_number, data.numel())
        faulty = self.test_fault == "wrong-data" or (self.test_fault == "wrong-data-first" and round_number == 0)
        trained_on = torch.roll(starts, 1) if faulty else starts
        began = time.perf_counter()
        losses = inner_steps(
            self.model, self.optimizer, data, trained_on, self.config, round_number * self.config.inner_steps
        )
        seconds = time.perf_counter() - began
        end = {name: value.detach().cpu() for name, value in self.model.state_dict().items()}
        checkpoint.write_segment(
            self.layout,
            SegmentMeta(
                round=round_number,
                worker_name=self.member.name,
                worker_index=self.index,
                torch_version=torch.__version__,
                threads=torch.get_num_threads(),
                device=str(self.device),
            ),
            starts,
            end,
        )
        self.sink.record(
            CheckpointRecord(
                round=round_number,
                worker_index=self.index,
                worker_name=self.member.name,
                config_hash=self.run.config_hash,
                start_weights_hash=weights_sha256(start),
                start_optimizer_hash=start_optimizer_hash,
                data_hash=data_order_sha256(starts),
                weights_hash=weights_sha256(end),
                optimizer_hash=weights_sha256(checkpoint.inner_state(self.optimizer, self.model)),
            )
        )
        tokens = starts.numel() * self.config.seq_len
        self.pending = Contribution(
            self.compression.encode(self.global_model.pseudo_gradient(end).to(self.device)),
            torch.tensor([sum(losses) / len(losses), tokens, seconds], dtype=torch.float64, device=self.device),
        )
        log.info("round %d rank %d: loss %.4f, %d tokens in %.2f s", round_number, rank, losses[-1], tokens, seconds)

    def _exchange(self) -> None:
        assert self.pending is not None
        size = dist.get_world_size()
        payloads = [torch.empty_like(self.pending.payload) for _ in range(size)]
        stats = [torch.empty_like(self.pending.stats) for _ in range(size)]
        with collective("exchanging pseudo-gradients"):
            dist.all_gather(payloads, self.pending.payload)
            dist.all_gather(stats, self.pending.stats)
        self.gathered = [Contribution(p, s) for p, s in zip(payloads, stats, strict=True)]

    def _finish(self, plan: Plan, rank: int) -> None:
        """The committed outer step; this worker's attestation of the new global state and its inner state
        for the next round; rank 0 also reports the round and writes the checkpoint."""
        self.global_model.step(average([c.payload for c in self.gathered], self.compression, self.numel).cpu())
        self.pending = None
        next_round = plan.round + 1
        checkpoint.save_tensors(
            self.layout.inner_file(next_round, self.member.name), checkpoint.inner_state(self.optimizer, self.model)
        )
        weights_hash = weights_sha256(self.global_model.weights())
        momentum_hash = weights_sha256(self.global_model.momentum())
        self.sink.record_global(plan.round, weights_hash, momentum_hash)
        if rank != 0:
            return
        stats = torch.stack([c.stats for c in self.gathered]).cpu()
        workers = len(plan.members)
        per_worker = self.compression.payload_bytes(self.numel) * (workers - 1)
        self.member.emit(
            {
                "event": "round",
                "round": plan.round,
                "step": next_round * self.config.inner_steps,
                "workers": [name for _, name in plan.members],
                "attempts": plan.attempt + 1,
                "train_loss": float(stats[:, 0].mean()),
                "tokens": int(stats[:, 1].sum()),
                "inner_seconds": float(stats[:, 2].max()),
                "seconds": time.perf_counter() - self.round_began,
                "bytes_per_worker": per_worker,
                "bytes_sent": per_worker * workers,
            }
        )
        self._publish_checkpoint(next_round, plan.members, weights_hash, momentum_hash)

    def _publish_checkpoint(
        self, n: int, members: list[tuple[int, str]], weights_hash: str, momentum_hash: str
    ) -> None:
        """Rank 0: write checkpoint n and evaluate it."""
        weights, momentum = self.global_model.weights(), self.global_model.momentum()
        with torch.no_grad():
            for name, param in self.model.named_parameters():
                param.copy_(weights[name])
        info = CheckpointInfo(
            checkpoint=n,
            step=n * self.config.inner_steps,
            run_id=self.run.run_id,
            config_hash=self.run.config_hash,
            weights_sha256=weights_hash,
            momentum_sha256=momentum_hash,
            workers={name: i for i, name in members},
        )
        checkpoint.write_global(self.layout, info, self.model, momentum, self.config)
        self.member.emit(
            {
                "event": "checkpoint",
                "checkpoint": n,
                "step": info.step,
                "val_loss": evaluate(self.model, self.validation),
                "weights_sha256": weights_hash,
            }
        )
        if self.spec.keep_checkpoints is not None:
            checkpoint.prune(self.layout, n, self.spec.keep_checkpoints)


def run(settings: JoinSettings) -> None:
    """``gonkad train --join``: take part in the run coordinated at ``settings.join`` until it ends."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    torch.set_num_threads(settings.threads)
    store = store_client(settings.join)
    spec = RunSpec.model_validate_json(store.get("run"))
    layout = RunLayout(Path(settings.out))
    corpus = load_corpus(spec.run.config)
    if config_hash(spec.run.config, corpus.sha256) != spec.run.config_hash:
        raise ValueError("this host's standard library differs from the run's corpus; it cannot take part")
    if not layout.run_file.exists():
        checkpoint.write_text(layout.run_file, spec.run.model_dump_json(indent=2) + "\n")
    device = pick_device(settings.device)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    sink: PoLSink = JsonlSink(layout.pol_file, settings.worker_name)
    if settings.chain is not None and store.check([CHAIN_KEY]):
        sink = ChainSink(sink, settings.chain, ChainRun.model_validate_json(store.get(CHAIN_KEY)), settings.worker_name)
    if settings.test_fault is not None:
        log.warning(
            "TEST-ONLY training fault %r is on: this worker's checkpoints do not follow from its data",
            settings.test_fault,
        )
    participant = Participant(
        Member(store, settings.worker_name), spec, layout, corpus, device, sink, settings.test_fault
    )
    participant.run_rounds()


def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"--device {name}: torch sees no CUDA device on this host")
    return torch.device(name)
