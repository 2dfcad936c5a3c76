"""A sharded collection on a real local Ray cluster (2 CPUs): indexed by writer actors and read tasks, searched by
reader actors, it ranks as one index does; a writer or a driver killed mid-run loses nothing a rerun does not
finish (engine.cluster.remote)."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'quire[cluster]')")

from clock import wait_until  # noqa: E402
from sharding import assert_ranks_as_one, write_documents  # noqa: E402

from engine import Index, IndexConfig  # noqa: E402
from engine.cluster import remote  # noqa: E402
from engine.cluster.collection import Collection  # noqa: E402
from engine.cluster.indexing import index_collection  # noqa: E402
from engine.cluster.routing import shard_of  # noqa: E402
from engine.errors import QuireError  # noqa: E402
from engine.filestate import FileState  # noqa: E402
from engine.search.like import LikeSource  # noqa: E402

pytestmark = pytest.mark.slow  # a Ray cluster, drivers killed: the tier .ci/run runs after the fast one and lint
REPO = Path(__file__).resolve().parent.parent
# Small batches: a run commits every few documents, so a shard has committed some of its documents and not all.
CONFIG = IndexConfig(workers=0, batch_sentences=16)
KILL_WAIT = 60
# Runs a kill test starts before its kill lands mid-run (see _kill_a_writer_mid_run).
KILL_TRIES = 3


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local cluster of 2 CPUs for this module; its address."""
    remote.connect("local", cpus=2)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(documents, one index of them made without a cluster)."""
    root = tmp_path_factory.mktemp("cluster")
    docs = write_documents(root / "docs")
    with Index(root / "one", config=CONFIG) as index:
        index.add([docs])
    return docs, root / "one"


def _per_shard(collection: Path, shards: int) -> list[dict[str, int]]:
    """Each shard's documents and their sentence counts."""
    out = []
    for shard in range(shards):
        with Index(collection / f"shard-{shard:03d}", create=False) as index:
            out.append({f.path: f.sentences for f in index.status(files=True).files})
    return out


def _expected(one: Path, shards: int) -> list[dict[str, int]]:
    """What an uninterrupted run puts in each shard: the single index's documents, routed by path."""
    with Index(one, create=False) as index:
        files = index.status(files=True).files
    return [{f.path: f.sentences for f in files if shard_of(f.path, shards) == s} for s in range(shards)]


def _indexed(shard: Path) -> int:
    """Documents a shard has committed (0 before it exists), read without opening it for writing."""
    try:
        with sqlite3.connect(f"file:{shard / 'index.db'}?mode=ro", uri=True) as conn:
            return conn.execute(f"SELECT count(*) FROM documents WHERE status = '{FileState.INDEXED}'").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def _wait_for_a_commit(shard: Path) -> None:
    assert wait_until(lambda: _indexed(shard) > 0, timeout=KILL_WAIT), "the shard's writer never committed"


@contextmanager
def _writes_held(shard: Path) -> Iterator[int]:
    """Holds the shard's write lock (its writer's next commit waits), so that a kill lands before the shard is
    finished however fast the writer runs; yields the documents the shard had committed when it was taken. The lock
    is asked for every millisecond: SQLite's busy handler sleeps ever longer between tries, and a writer that commits
    back to back took it again each time until its shard was whole (CI)."""
    conn = sqlite3.connect(shard / "index.db", timeout=0, isolation_level=None)
    deadline = time.monotonic() + KILL_WAIT
    try:
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE")
                break
            except sqlite3.OperationalError:  # locked by the writer's commit
                assert time.monotonic() < deadline, "the shard's write lock was never free"
                time.sleep(0.001)
        yield conn.execute(f"SELECT count(*) FROM documents WHERE status = '{FileState.INDEXED}'").fetchone()[0]
    finally:
        conn.close()


def _wait_for_the_writer_to_end(shard: int) -> None:
    """A killed driver's writer ends when the cluster sees the driver die (seconds)."""
    assert wait_until(lambda: remote.writer_name(shard) not in ray.util.list_named_actors(), timeout=KILL_WAIT), \
        "the killed run's writer lives on"


def test_four_shards_on_a_cluster_rank_as_one_index(cluster: str, single: tuple[Path, Path], tmp_path: Path) -> None:
    docs, one = single
    report = index_collection(tmp_path / "four", [docs], 4, config=CONFIG, cluster="local")
    assert report.documents == 52
    assert _per_shard(tmp_path / "four", 4) == _expected(one, 4)
    with Index(one, create=False) as index, Collection(tmp_path / "four", cluster="local") as sharded:
        assert_ranks_as_one(index, sharded)
        assert (sharded.status().indexed, sharded.status().sentences) == (52, index.status().sentences)
        source = LikeSource(str(sorted(docs.rglob("*.txt"))[7]))
        like = [r.path for r in sharded.search_like(source, include_weak=True, explain=False).results]
        assert like and source.path not in like


def _run_into(db: Path, docs: Path, failed: list[BaseException]) -> None:
    """A two-shard run on the local cluster, what it raised added to ``failed``."""
    try:
        index_collection(db, [docs], 2, config=CONFIG, cluster="local")
    except QuireError as e:
        failed.append(e)


def _kill_a_writer_mid_run(db: Path, docs: Path, total: int) -> list[BaseException]:
    """Start a run into ``db`` on another thread and kill shard 0's writer once it has committed; what the run
    raised. The kill may land too late on a busy machine (the shard whole, or the run over and its writers gone, as
    CI saw): then a fresh run, up to KILL_TRIES. No write lock is held here: a writer that finds the database locked
    while it holds a read fails at once ("database is locked") rather than being killed."""
    for _ in range(KILL_TRIES):
        failed: list[BaseException] = []
        thread = threading.Thread(target=_run_into, args=(db, docs, failed))
        thread.start()
        _wait_for_a_commit(db / "shard-000")
        with contextlib.suppress(ValueError):  # no such actor: the run is over
            ray.kill(ray.get_actor(remote.writer_name(0), namespace=remote.NAMESPACE))
        thread.join()
        if failed and _indexed(db / "shard-000") < total:
            return failed
        shutil.rmtree(db)
    pytest.fail(f"the shard was whole before its writer could be killed, {KILL_TRIES} times")


def test_a_writer_killed_mid_run_is_finished_by_a_rerun(cluster: str, single: tuple[Path, Path],
                                                         tmp_path: Path) -> None:
    docs, one = single
    failed = _kill_a_writer_mid_run(tmp_path / "two", docs, len(_expected(one, 2)[0]))
    assert failed and "run the same command again" in str(failed[0])
    assert _indexed(tmp_path / "two" / "shard-000") < len(_expected(one, 2)[0])
    index_collection(tmp_path / "two", [docs], 2, config=CONFIG, cluster="local")
    assert _per_shard(tmp_path / "two", 2) == _expected(one, 2)


def test_a_driver_killed_mid_run_is_finished_by_a_rerun(cluster: str, single: tuple[Path, Path],
                                                         tmp_path: Path) -> None:
    docs, one = single
    db = tmp_path / "two"
    # batches of 4: a shard commits many times, so this process takes the write lock before the shard is done even
    # when the machine is so busy that it polls late
    command = [sys.executable, "-m", "app.cli", "index", str(docs), "--db", str(db), "--shards", "2", "--batch", "4",
               "--cluster", cluster, "--json"]
    total = len(_expected(one, 2)[0])
    for _ in range(KILL_TRIES):  # a fresh run where the shard was whole before this process held it (as above)
        driver = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            _wait_for_a_commit(db / "shard-000")
            with _writes_held(db / "shard-000") as indexed:
                if indexed < total:
                    driver.kill()
                    driver.wait()
                    _wait_for_the_writer_to_end(0)
            driver.wait(timeout=KILL_WAIT)
        finally:
            driver.kill()
            driver.wait()
        if indexed < total:
            break
        shutil.rmtree(db)
    assert _indexed(db / "shard-000") < total
    # the rerun from this process, whose workers on the cluster are started already
    index_collection(db, [docs], 2, config=CONFIG, cluster=cluster)
    assert _per_shard(db, 2) == _expected(one, 2)


def test_a_second_run_while_a_writer_holds_its_shard_waits_then_says_so(cluster: str, single: tuple[Path, Path],
                                                                         tmp_path: Path, monkeypatch) -> None:
    # a killed run's writer keeps its name until the cluster sees its driver die: a rerun waits for it; a live
    # writer of another run is reported, not replaced
    docs, _ = single

    @ray.remote(num_cpus=0)
    class Holder:
        def ping(self) -> bool:
            return True

    holder = Holder.options(name=remote.writer_name(0), namespace=remote.NAMESPACE).remote()
    ray.get(holder.ping.remote())
    monkeypatch.setattr(remote, "WRITER_NAME_WAIT_S", 1.0)
    try:
        with pytest.raises(QuireError, match="shard 0 is being written by another run"):
            index_collection(tmp_path / "held", [docs], 2, config=CONFIG, cluster=cluster)
        threading.Timer(1.0, ray.kill, (holder,)).start()  # the other run ends while this one waits
        monkeypatch.setattr(remote, "WRITER_NAME_WAIT_S", 30.0)
        index_collection(tmp_path / "freed", [docs], 2, config=CONFIG, cluster=cluster)
        assert _indexed(tmp_path / "freed" / "shard-000") > 0
    finally:
        ray.kill(holder)
