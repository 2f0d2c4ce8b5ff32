"""The global model and its outer optimizer: SGD with Nesterov momentum on the averaged pseudo-gradient.

With momentum buffer m (zero before the first step), learning rate lr and momentum μ, one outer step is
m ← μ·m + Δ̄ and θ ← θ − lr·(Δ̄ + μ·m), where Δ̄ is the mean over workers of (θ − θ_worker).
Every worker holds the same global state and applies the same step to the same averaged bytes, so no
one has to broadcast the result.
"""

from __future__ import annotations

import torch
from torch import nn

from diloco.compress import Compression


class GlobalModel:
    """Named fp32 global parameters (the model's state-dict names) plus the outer SGD-Nesterov state."""

    def __init__(self, weights: dict[str, torch.Tensor], lr: float, momentum: float) -> None:
        self.names = sorted(weights)
        self.params = {name: nn.Parameter(weights[name].detach().float().clone()) for name in self.names}
        # torch refuses Nesterov without momentum; with μ = 0 both are plain SGD.
        self.optimizer = torch.optim.SGD(list(self.params.values()), lr=lr, momentum=momentum, nesterov=momentum > 0)

    def weights(self) -> dict[str, torch.Tensor]:
        return {name: param.detach() for name, param in self.params.items()}

    def momentum(self) -> dict[str, torch.Tensor]:
        """The momentum buffers; zeros before the first step (which is what a zero buffer does)."""
        state = self.optimizer.state
        return {
            name: (state[param]["momentum_buffer"] if param in state else torch.zeros_like(param)).detach()
            for name, param in self.params.items()
        }

    def load(self, weights: dict[str, torch.Tensor], momentum: dict[str, torch.Tensor]) -> None:
        with torch.no_grad():
            for name, param in self.params.items():
                param.copy_(weights[name])
                self.optimizer.state[param]["momentum_buffer"] = momentum[name].detach().clone().to(param)

    def flat(self, tensors: dict[str, torch.Tensor]) -> torch.Tensor:
        return torch.cat([tensors[name].detach().reshape(-1).float() for name in self.names])

    def unflat(self, flat: torch.Tensor) -> dict[str, torch.Tensor]:
        sizes = [self.params[name].numel() for name in self.names]
        return {
            name: part.view_as(self.params[name])
            for name, part in zip(self.names, torch.split(flat, sizes), strict=True)
        }

    def pseudo_gradient(self, local: dict[str, torch.Tensor]) -> torch.Tensor:
        """θ_global − θ_local, flat, in name order."""
        return self.flat(self.weights()) - self.flat(local)

    def step(self, mean_pseudo_gradient: torch.Tensor) -> None:
        for name, grad in self.unflat(mean_pseudo_gradient).items():
            self.params[name].grad = grad.clone()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)


def average(payloads: list[torch.Tensor], compression: Compression, numel: int) -> torch.Tensor:
    """Mean of the workers' decoded payloads, accumulated in fp32 in rank order (the same bytes on
    every worker)."""
    total = torch.zeros(numel, dtype=torch.float32, device=payloads[0].device)
    for payload in payloads:
        total += compression.decode(payload, numel)
    return total / len(payloads)
