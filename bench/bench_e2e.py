"""End to end: chat through the TA to a real ML node (``--preset tiny``) against the same node directly.

Processes on loopback: the ML node (``gonkad mlnode start --preset tiny --port 0 --threads 1``), the TA
(``bench_agent.py``'s, over the same in-memory ChainView, with the node's model registered under its identity,
``name@sha256:…`` from the node's ``GET /v1/models``) and this load generator (``bench_agent``'s). Every request
is the same chat (``max_tokens`` 16, temperature 0, a fixed seed), signed afresh for the TA; the script first
checks that both ways answer the same text. Latency: ``--requests`` one at a time each way, 20 at a time in turn; then
``--concurrency`` connections for ``--seconds`` each way, in ``--rounds`` slices taken in turn (requests per
second and latency under load). The ratios TA/direct show what the TA costs beside a model that really computes.

    .venv/bin/python bench/bench_e2e.py [--requests 200] [--concurrency 4] [--seconds 10] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.request
from typing import Any

from bench_agent import Processes, Target, measure, post, ratios, rounded, signed, start_role, unsigned, versions


def chat(model: str, seed: int) -> bytes:
    return json.dumps(
        {
            "model": model,
            "messages": [{"role": "user", "content": "hello"}],
            "max_tokens": 16,
            "temperature": 0,
            "seed": seed,
        }
    ).encode()


def identity(node_url: str) -> str:
    """The node's one model as the chain names it: ``name@sha256:…`` (what a TA routes by)."""
    with urllib.request.urlopen(f"{node_url}/v1/models", timeout=10) as answer:
        return str(json.load(answer)["data"][0]["identity"])


async def same_answer(direct: Target, through: Target) -> dict[str, Any]:
    """The answer's usage, once both ways answered the same text (same model, seed and temperature 0)."""
    answers = []
    for target in (direct, through):
        _, body = await post(target.pool, target.body, target.headers(1)[0])
        answers.append(json.loads(body))
    texts = [answer["choices"][0]["message"]["content"] for answer in answers]
    if texts[0] != texts[1]:
        raise RuntimeError(f"direct and through the TA differ: {texts[0]!r} != {texts[1]!r}")
    return dict(answers[0]["usage"])


async def run(direct: Target, through: Target, args: argparse.Namespace) -> dict[str, Any]:
    usage = await same_answer(direct, through)
    result = await measure(
        [direct, through],
        args.requests,
        args.concurrency,
        args.seconds,
        args.rounds,
        warm=args.warm,
        most_rps=500,
        turn=20,
    )
    return {"usage": usage, **result, "ta_over_direct": ratios(result, "ta", "direct")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warm", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1234)
    args = parser.parse_args()
    with Processes() as processes:
        _, node_url = processes.ready_line(
            "ML node",
            [sys.executable, "-m", "gonkad", "mlnode", "start", "--preset", "tiny", "--port", "0", "--threads", "1"],
        )
        model = identity(node_url)
        ta_pid, ta_url = start_role(processes, "ta", "--model", model, node_url)
        body = chat(model, args.seed)
        direct = Target("direct", node_url, unsigned, body=body)
        through = Target("ta", ta_url, lambda count: signed(count, body), ta_pid, body=body)
        import uvloop

        result = uvloop.run(run(direct, through, args))
        print(
            json.dumps(
                rounded(
                    {
                        "model": model,
                        "requests": args.requests,
                        "concurrency": args.concurrency,
                        "seconds": args.seconds,
                        "rounds": args.rounds,
                        "load_average": os.getloadavg(),
                        "python": sys.version.split()[0],
                        "versions": versions(),
                        **result,
                    }
                ),
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
