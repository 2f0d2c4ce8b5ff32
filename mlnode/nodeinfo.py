"""The host's hardware as a node publishes it: memory now, and bandwidth measured once at startup.

Decoding a batch reads every weight once per token, so memory bandwidth bounds a node's throughput;
measuring it beats trusting a spec sheet.
"""

from __future__ import annotations

import time
from pathlib import Path

import torch
from pydantic import BaseModel, ConfigDict

from mlnode.schemas import Memory

MEMINFO = Path("/proc/meminfo")


class Hardware(BaseModel):
    model_config = ConfigDict(frozen=True)

    device: str
    threads: int
    memory_bandwidth_gbps: float


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure_bandwidth(device: torch.device, size_bytes: int = 1 << 27, repeats: int = 5) -> float:
    """GB/s of a large tensor copy (bytes read plus bytes written), best of ``repeats``."""
    source = torch.ones(size_bytes // 4, dtype=torch.float32, device=device)
    target = torch.empty_like(source)
    target.copy_(source)
    best = float("inf")
    for _ in range(repeats):
        _synchronize(device)
        start = time.perf_counter()
        target.copy_(source)
        _synchronize(device)
        best = min(best, time.perf_counter() - start)
    return 2 * size_bytes / best / 1e9


def memory(device: str) -> Memory:
    """VRAM of a CUDA device, otherwise the machine's RAM (``MemAvailable`` counts reclaimable cache)."""
    if torch.device(device).type == "cuda":
        available, total = torch.cuda.mem_get_info(torch.device(device))
        return Memory(kind="vram", total_bytes=total, available_bytes=available)
    fields = dict(line.split(":", 1) for line in MEMINFO.read_text().splitlines() if ":" in line)
    sizes = {name: int(fields[name].split()[0]) * 1024 for name in ("MemTotal", "MemAvailable")}
    return Memory(kind="ram", total_bytes=sizes["MemTotal"], available_bytes=sizes["MemAvailable"])


def measure(device: torch.device) -> Hardware:
    return Hardware(
        device=str(device), threads=torch.get_num_threads(), memory_bandwidth_gbps=round(measure_bandwidth(device), 2)
    )
