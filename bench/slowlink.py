"""An emulated wide-area link between two network namespaces: bandwidth, propagation delay, a bounded queue.

This kernel has no ``netem`` qdisc, so the link is emulated in user space: each namespace gets a TUN
device as its only route to the other, and a relay thread in this process moves IP packets between the
two devices. Per direction the relay is a serial link: a packet starts transmitting when the previous
one has left (``size / rate``), arrives ``rtt / 2`` after it has left, and is dropped when the queue
ahead of it already holds more than ``queue_s`` of transmission time (a tail-drop router buffer). TCP
between the namespaces therefore sees the real bandwidth-delay product, slow start and loss.

Needs root (``ip netns``, ``/dev/net/tun``). Usage::

    with SlowLink(rate_bps=100e6, rtt_s=0.05) as link:
        subprocess.run(link.command("a", ["python", "-m", "server"]))   # 10.77.0.1
        subprocess.run(link.command("b", ["python", "client.py"]))      # 10.77.0.2
"""

from __future__ import annotations

import fcntl
import heapq
import os
import selectors
import struct
import subprocess
import threading
import time
from dataclasses import dataclass, field
from types import TracebackType

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
ADDRESSES = {"a": "10.77.0.1", "b": "10.77.0.2"}


@dataclass
class Direction:
    """One way of the link: where its packets go, when its transmitter is next free, what it dropped."""

    out_fd: int
    next_free: float = 0.0
    dropped: int = 0


@dataclass(order=True)
class InFlight:
    arrives: float
    sequence: int
    direction: Direction = field(compare=False)
    packet: bytes = field(compare=False)


class SlowLink:
    """Two namespaces, ``a`` and ``b``, joined by the emulated link while the context is open."""

    def __init__(self, rate_bps: float, rtt_s: float, queue_s: float = 0.1, mtu: int = 9000) -> None:
        self.rate_bps, self.rtt_s, self.queue_s, self.mtu = rate_bps, rtt_s, queue_s, mtu
        tag = str(os.getpid())
        self.namespaces = {side: f"gk{side}{tag}" for side in ADDRESSES}
        self.devices = {side: f"gkt{side}{tag}"[:15] for side in ADDRESSES}
        self.fds: dict[str, int] = {}
        self.directions: dict[int, Direction] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._relay, name="slowlink", daemon=True)

    def address(self, side: str) -> str:
        return ADDRESSES[side]

    def device(self, side: str) -> str:
        return self.devices[side]

    def command(self, side: str, argv: list[str]) -> list[str]:
        """``argv`` run inside namespace ``side``."""
        return ["ip", "netns", "exec", self.namespaces[side], *argv]

    def __enter__(self) -> SlowLink:
        try:
            for side, namespace in self.namespaces.items():
                _ip("netns", "add", namespace)
                self.fds[side] = _open_tun(self.devices[side])
                peer = ADDRESSES["b" if side == "a" else "a"]
                _ip("link", "set", self.devices[side], "netns", namespace)
                _ip("-n", namespace, "link", "set", "lo", "up")
                _ip("-n", namespace, "addr", "add", ADDRESSES[side], "peer", peer, "dev", self.devices[side])
                _ip("-n", namespace, "link", "set", self.devices[side], "mtu", str(self.mtu), "up")
        except BaseException:
            self._teardown()
            raise
        self.directions = {self.fds["a"]: Direction(self.fds["b"]), self.fds["b"]: Direction(self.fds["a"])}
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self._teardown()

    def dropped(self) -> int:
        return sum(d.dropped for d in self.directions.values())

    def _teardown(self) -> None:
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()
        for namespace in self.namespaces.values():
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True, check=False)

    def _relay(self) -> None:
        selector = selectors.DefaultSelector()
        for fd in self.directions:
            selector.register(fd, selectors.EVENT_READ)
        queue: list[InFlight] = []
        sequence = 0
        while not self._stop.is_set():
            now = time.monotonic()
            while queue and queue[0].arrives <= now:
                sent = heapq.heappop(queue)
                os.write(sent.direction.out_fd, sent.packet)
            wait = min(0.05, queue[0].arrives - now) if queue else 0.05
            for key, _ in selector.select(timeout=max(0.0, wait)):
                packet = os.read(key.fd, 65536)
                now = time.monotonic()
                direction = self.directions[key.fd]
                starts = max(now, direction.next_free)
                if starts - now > self.queue_s:
                    direction.dropped += 1
                    continue
                direction.next_free = starts + len(packet) * 8 / self.rate_bps
                sequence += 1
                heapq.heappush(queue, InFlight(direction.next_free + self.rtt_s / 2, sequence, direction, packet))
        selector.close()


def _open_tun(name: str) -> int:
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)
