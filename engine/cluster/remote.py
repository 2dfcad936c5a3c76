"""A sharded collection on a Ray cluster: the only module that imports ray.

- **Indexing**: one writer actor per shard runs the shard's ordinary indexing run (``Index.add``), so each shard has
  one writer at a time; the run's files are read, split into sentences and tokenised for the static model by Ray
  tasks anywhere on the cluster (:func:`cluster_extract`), and the writer pools the word vectors and writes. Writers
  live on the driver's machine, which holds the collection folder (SQLite wants a local disk).
- **Search**: one reader actor per shard keeps it open, graph in memory, between queries (:class:`RayShards`);
  spread over the cluster, they need the collection folder at the same path on every machine.

Files to index must be at the same path on every machine that reads them (a shared drive).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from engine.cluster.collection import Calls
from engine.cluster.routing import Route
from engine.config import IndexConfig
from engine.errors import CancelFlag, QuireError
from engine.heap import freeze_long_lived, keep_freed_memory
from engine.index import Index
from engine.ingest.extract import Extracted, extract
from engine.ingest.pool import CANCEL_CHECK_SECONDS, TASK_FILES, Job, Prepare, read_task
from engine.ingest.readers.base import Limits
from engine.reports import IndexReport

# Read tasks in flight per CPU of the cluster: enough that a worker never waits for its next task while the writers
# take results, few enough that read documents do not pile up in the object store.
TASKS_PER_CPU = 2
# A read task whose worker died (killed, out of memory) runs again this many times before the run fails.
TASK_RETRIES = 3
NAMESPACE = "quire"
# The reader actor's calls that are searches, counted towards freezing what its process holds (engine/heap.py).
SEARCHES = frozenset({"search", "search_like"})
# How long a writer waits for its name, held by the writer of a run whose driver was killed, to be freed
WRITER_NAME_WAIT_S = 60.0


def connect(address: str, *, cpus: int | None = None) -> None:
    """Join the cluster at ``address`` ("local": start one on this machine with ``cpus`` CPUs, default all), once
    per process.

    The job's workers import quire first from where this process does (a checkout runs as installed); on a machine
    without that folder, from the quire installed there, which must be the same version."""
    if ray.is_initialized():
        return
    code = str(Path(__file__).resolve().parents[2])
    runtime_env = {"env_vars": {"PYTHONPATH": os.pathsep.join(filter(None, [code, os.environ.get("PYTHONPATH")]))}}
    try:
        if address == "local":
            ray.init(num_cpus=cpus, namespace=NAMESPACE, include_dashboard=False, log_to_driver=False,
                     logging_level=logging.ERROR, runtime_env=runtime_env)
        else:
            ray.init(address=address, namespace=NAMESPACE, log_to_driver=False, logging_level=logging.ERROR,
                     runtime_env=runtime_env)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise QuireError(f"cannot reach the Ray cluster at {address} ({e}); start it with `ray start --head`") from e


@ray.remote(max_retries=TASK_RETRIES)
def _read(task: list[Job], limits: Limits, prepare: Prepare | None) -> list[Extracted]:
    return read_task(extract, task, limits, prepare, False)  # a Ray worker is interrupted, never ended by quire


def cluster_extract(jobs: list[Job], limits: Limits, workers: int | None, *,
                    prepare: Prepare | None = None, cancel: CancelFlag | None = None) -> Iterator[Extracted]:
    """:func:`engine.ingest.pool.extract_all` on the cluster's workers: tasks of TASK_FILES files, outcomes as they
    complete (``workers`` is the local pool's setting and is not used: the cluster's CPUs decide); stops within
    CANCEL_CHECK_SECONDS of ``cancel`` being set."""
    pending = [jobs[start : start + TASK_FILES] for start in range(0, len(jobs), TASK_FILES)]
    pending.reverse()
    room = max(1, TASKS_PER_CPU * int(ray.cluster_resources().get("CPU", 1)))
    running: list[ray.ObjectRef] = []
    while pending or running:
        while pending and len(running) < room:
            running.append(_read.remote(pending.pop(), limits, prepare))
        done, running = ray.wait(running, num_returns=1, timeout=CANCEL_CHECK_SECONDS)
        if cancel is not None and cancel.is_set():
            return
        if done:
            yield from ray.get(done[0])


@ray.remote(num_cpus=0)
class _Writer:
    """Writes one shard: its ordinary indexing run over the files routed to it, read by the cluster."""

    def __init__(self, folder: str, method: str, config: IndexConfig) -> None:
        self.folder, self.method, self.config = folder, method, config

    def add(self, paths: list[str], route: Route) -> IndexReport:
        with Index(self.folder, method=self.method, config=self.config) as index:
            return index.add(paths, keep=route, extract=cluster_extract)


def index_shards(folders: Sequence[Path], paths: Sequence[str], method: str, config: IndexConfig) -> list[IndexReport]:
    """Index ``paths`` into every shard at once, each by its own writer on this machine."""
    here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
    writers = [_writer(i, here, str(f), method, config) for i, f in enumerate(folders)]
    try:
        return _get([w.add.remote(list(paths), Route(i, len(folders))) for i, w in enumerate(writers)])
    finally:
        for writer in writers:
            ray.kill(writer)


def _writer(shard: int, here: NodeAffinitySchedulingStrategy, folder: str, method: str, config: IndexConfig) -> Any:
    """Shard ``shard``'s writer, under its name. The name of a killed run's writer stays taken until the cluster has
    seen that run's driver die (seconds): waited for, up to WRITER_NAME_WAIT_S, then reported."""
    deadline = time.monotonic() + WRITER_NAME_WAIT_S
    while True:
        taken: Exception | None = None
        if writer_name(shard) not in ray.util.list_named_actors():
            try:
                # ray.remote(**options) is typed as giving back the class itself, without the actor class's options()
                return _Writer.options(  # type: ignore[attr-defined]
                    name=writer_name(shard), scheduling_strategy=here).remote(folder, method, config)
            # taken meanwhile; Ray 2.60 checks a taken name by loading its actor's class, which fails with an
            # AssertionError ("Expected str or bytes") while the job that made it is dead but not yet cleaned up
            except (ray.exceptions.ActorAlreadyExistsError, AssertionError) as e:
                taken = e
        if time.monotonic() > deadline:
            raise QuireError(f"shard {shard} is being written by another run on this cluster (its writer "
                             f"{writer_name(shard)} is alive): wait for that run to end, then run again") from taken
        time.sleep(0.5)


def _get(refs: list[ray.ObjectRef]) -> list[Any]:
    """The results of ``refs``; quire's own errors on a worker (a query's, a locked shard's) read as they do without
    a cluster, and a worker that died says what to do."""
    try:
        return ray.get(refs)
    except ray.exceptions.RayTaskError as e:
        if isinstance(e.cause, QuireError):
            raise e.cause from e
        raise QuireError(f"a shard's work failed on the cluster: {e.cause!r}") from e
    except ray.exceptions.RayError as e:
        raise QuireError(f"a shard's worker died ({type(e).__name__}); run the same command again to finish: "
                         f"what was written is kept") from e


def writer_name(shard: int) -> str:
    """The name of shard ``shard``'s writer actor in the quire namespace (tests find it by this name)."""
    return f"quire-writer-{shard}"


@ray.remote(num_cpus=0)
class _Reader:
    """Keeps one shard open for searching; any :class:`engine.Index` method is called through :meth:`call`."""

    def __init__(self, folder: str) -> None:
        # the actor's process is this reader's alone and keeps searching: it opts in as an entry point would
        keep_freed_memory()
        self.index = Index(folder, create=False)

    def call(self, method: str, args: tuple, kwargs: dict) -> Any:
        answer = getattr(self.index, method)(*args, **kwargs)
        if method in SEARCHES:
            freeze_long_lived()
        return answer


class RayShards:
    """The shards of a collection as reader actors spread over the cluster (``engine.cluster.collection.Shards``)."""

    def __init__(self, folders: Sequence[Path], address: str) -> None:
        connect(address)
        # ray.remote(**options) is typed as giving back the class itself, without the actor class's options()
        self._readers = [_Reader.options(scheduling_strategy="SPREAD").remote(str(f))  # type: ignore[attr-defined]
                         for f in folders]

    def call(self, method: str, calls: Calls) -> dict[int, Any]:
        """Run ``method`` on each named shard's reader actor at once; the answers by shard."""
        refs = {shard: self._readers[shard].call.remote(method, args, kwargs) for shard, (args, kwargs) in calls.items()}
        return dict(zip(refs, _get(list(refs.values()))))

    def close(self) -> None:
        """End the reader actors."""
        for reader in self._readers:
            ray.kill(reader)
