"""The inner loop: H AdamW steps of next-byte prediction on a worker's own windows.

Training and Proof-of-Learning replay both run exactly this code, so a replay on the same torch build
and thread count reproduces the worker's bytes.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from diloco.config import TrainConfig
from diloco.data import batches
from mlnode.model import Transformer


def lr_at(step: int, config: TrainConfig) -> float:
    """Linear warmup, then cosine decay to ``min_lr`` at the run's last inner step."""
    if step < config.warmup_steps:
        return config.inner_lr * (step + 1) / config.warmup_steps
    span = max(1, config.total_inner_steps - config.warmup_steps)
    progress = min(1.0, (step - config.warmup_steps) / span)
    return config.min_lr + 0.5 * (config.inner_lr - config.min_lr) * (1 + math.cos(math.pi * progress))


def initial_weights(config: TrainConfig) -> dict[str, torch.Tensor]:
    """Checkpoint 0: the seeded initialisation every worker and the chain registration start from."""
    return Transformer(config.architecture()).init_weights(config.seed).state_dict()


def inner_optimizer(model: Transformer, config: TrainConfig) -> torch.optim.AdamW:
    return torch.optim.AdamW(
        model.parameters(), lr=config.inner_lr, betas=(config.beta1, config.beta2), weight_decay=config.weight_decay
    )


def loss_of(model: Transformer, tokens: torch.Tensor) -> torch.Tensor:
    logits = model(tokens[:, :-1])
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))


def inner_steps(
    model: Transformer,
    optimizer: torch.optim.AdamW,
    data: torch.Tensor,
    starts: torch.Tensor,
    config: TrainConfig,
    first_step: int,
) -> list[float]:
    """Train on one round's windows; returns each step's loss. ``first_step`` (round · H) places the
    round on the learning-rate schedule."""
    device = next(model.parameters()).device
    model.train()
    losses = []
    for offset, tokens in enumerate(batches(data, starts, config.seq_len)):
        for group in optimizer.param_groups:
            group["lr"] = lr_at(first_step + offset, config)
        loss = loss_of(model, tokens.to(device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
        optimizer.step()
        losses.append(loss.item())
    return losses


@torch.no_grad()
def evaluate(model: Transformer, validation: list[torch.Tensor]) -> float:
    device = next(model.parameters()).device
    model.eval()
    return sum(loss_of(model, tokens.to(device)).item() for tokens in validation) / len(validation)
