"""Where module queries and simulations run: a few threads beside the node's event loop.

The event loop answers CometBFT's consensus and mempool connections; a query computed on it would make
them wait as long as the query takes. Instead the loop turns a query into a job over a snapshot of the
committed state (``BaseApp.begin_query``, ``BaseApp.committed_job``) and awaits it here, serving every
other connection meanwhile. Jobs share the GIL with the loop, so the pool is small: more threads would
only take more turns from consensus.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


def query_workers(threads: int) -> ThreadPoolExecutor:
    """The node's pool; shut it down (waiting) before closing the store its jobs read."""
    return ThreadPoolExecutor(threads, thread_name_prefix="gonkad-query")


async def run_job(workers: Executor | None, job: Callable[[], T]) -> T:
    """``job()`` on a worker thread, or on the calling thread when there are no workers (tests, tools)."""
    if workers is None:
        return job()
    return await asyncio.get_running_loop().run_in_executor(workers, job)
