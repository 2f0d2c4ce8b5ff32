"""The TA's Prometheus metrics, kept by hand (a few counters and one histogram; no client library)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

from agent.router import NodeState

BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


def label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class Metrics:
    def __init__(self) -> None:
        self.by_code: dict[int, int] = {}
        self.counts = [0] * (len(BUCKETS) + 1)
        self.total_s = 0.0
        self.retries = 0
        self.answered_again = 0
        self.chain_retries = 0

    def observe(self, status: int, seconds: float) -> None:
        self.by_code[status] = self.by_code.get(status, 0) + 1
        self.counts[bisect_left(BUCKETS, seconds)] += 1
        self.total_s += seconds

    def render(self, queue_length: int, in_flight: int, nodes: Iterable[NodeState]) -> bytes:
        out = [
            "# HELP gonka_ta_requests_total Chat completion requests answered, by HTTP status code "
            "(499: the client left).",
            "# TYPE gonka_ta_requests_total counter",
        ]
        out += [f'gonka_ta_requests_total{{code="{code}"}} {count}' for code, count in sorted(self.by_code.items())]
        out += [
            "# HELP gonka_ta_retries_total Requests sent again to another node after one failed before answering.",
            "# TYPE gonka_ta_retries_total counter",
            f"gonka_ta_retries_total {self.retries}",
            "# HELP gonka_ta_answered_again_total Finished requests a failed-over client got again from the "
            "host that finished them.",
            "# TYPE gonka_ta_answered_again_total counter",
            f"gonka_ta_answered_again_total {self.answered_again}",
            "# HELP gonka_ta_chain_retries_total Chain calls tried again while the TA's node did not answer.",
            "# TYPE gonka_ta_chain_retries_total counter",
            f"gonka_ta_chain_retries_total {self.chain_retries}",
            "# HELP gonka_ta_queue_length Requests waiting in the fee-priority queue.",
            "# TYPE gonka_ta_queue_length gauge",
            f"gonka_ta_queue_length {queue_length}",
            "# HELP gonka_ta_in_flight Requests sent to ML nodes and not yet answered.",
            "# TYPE gonka_ta_in_flight gauge",
            f"gonka_ta_in_flight {in_flight}",
            "# HELP gonka_ta_request_duration_seconds Time from a request's arrival to the end of its answer.",
            "# TYPE gonka_ta_request_duration_seconds histogram",
        ]
        cumulative = 0
        for bound, count in zip(BUCKETS, self.counts):
            cumulative += count
            out.append(f'gonka_ta_request_duration_seconds_bucket{{le="{bound}"}} {cumulative}')
        cumulative += self.counts[-1]
        out += [
            f'gonka_ta_request_duration_seconds_bucket{{le="+Inf"}} {cumulative}',
            f"gonka_ta_request_duration_seconds_sum {self.total_s}",
            f"gonka_ta_request_duration_seconds_count {cumulative}",
            "# HELP gonka_ta_node_in_flight Requests this TA has in flight on each ML node.",
            "# TYPE gonka_ta_node_in_flight gauge",
        ]
        nodes = list(nodes)
        names = [f'operator="{label(s.node.operator)}",node_id="{label(s.node.node_id)}"' for s in nodes]
        out += [f"gonka_ta_node_in_flight{{{name}}} {s.local}" for name, s in zip(names, nodes)]
        out += [
            "# HELP gonka_ta_node_up Whether the ML node answered its last poll or request (1) or is dead (0).",
            "# TYPE gonka_ta_node_up gauge",
        ]
        out += [f"gonka_ta_node_up{{{name}}} {int(s.alive)}" for name, s in zip(names, nodes)]
        return ("\n".join(out) + "\n").encode()
