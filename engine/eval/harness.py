"""The benchmark: every embedding method and baseline measured by the same code, each number recomputed each run.

Per method: STS-B dev/test Spearman, EvalRank (intrinsic.py), encode speed; then retrieval through the product
(product.py) in semantic and hybrid mode on each collection, scored on what the default search shows (the relevance
gate included; the headline) and on the ungated ranking (a diagnostic), with the share of queries answered "nothing
relevant", indexing speed, index size, peak memory and query latency. Baselines: BM25 and model2vec ``distill`` on
whole documents (baselines.py). A method or baseline that raises is recorded as failed with its message, never dropped.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import ClassVar

import numpy as np

from engine.errors import ConfigError
from engine.eval import baselines, product
from engine.eval.datasets import (
    RETRIEVAL_COLLECTIONS,
    Collection,
    EvalRankData,
    StsPairs,
    load_collection,
    load_evalrank,
    load_sts,
)
from engine.eval.intrinsic import Encode, evalrank, sentences_per_second, sts_spearman
from engine.eval.metrics import ndcg_at, recall_at

log = logging.getLogger(__name__)

Say = Callable[[str], None]

# The checkout this module lives in: results go under its bench/, and the machine stamp names its git commit.
REPO = Path(__file__).resolve().parents[2]


def default_data_dir() -> Path:
    """$QUIRE_BENCH_DATA, else the shared benchmark folder beside the checkout."""
    return Path(os.environ.get("QUIRE_BENCH_DATA") or REPO.parent / "shared" / "data" / "benchmarks")


def default_results_dir() -> Path:
    """Where ``latest.json`` and ``latest.md`` go."""
    return REPO / "bench" / "results"


@dataclass(frozen=True)
class Sizes:
    """How much of each benchmark a run uses; None = all of it."""

    sts_pairs: int | None = None
    evalrank_pairs: int | None = None
    evalrank_pool: int | None = None
    queries: int | None = None
    distractors: int | None = None
    # The reference numbers' speed column (docs/benchmarks.md) encodes 4,000 EvalRank background sentences in one
    # process.
    encode_sentences: int = 4000


FULL = Sizes()
# A CI smoke test: minutes on two cores, every code path exercised.
QUICK = Sizes(sts_pairs=150, evalrank_pairs=300, evalrank_pool=2000, queries=10, distractors=200, encode_sentences=500)


@dataclass(frozen=True)
class Plan:
    """What to run. ``timeout`` bounds each `quire` subprocess (an index build of one collection, say)."""

    data: Path
    methods: tuple[str, ...]
    sizes: Sizes = FULL
    baselines: tuple[str, ...] = ("bm25", "model2vec")
    collections: tuple[str, ...] | None = None  # retrieval collections to run (None: every one in the data folder)
    timeout: float = 3600.0
    work: Path | None = None
    budget: float | None = None  # seconds each method may spend on the benchmarks (None: no limit); see Allowance


@dataclass(frozen=True)
class Benchmarks:
    """The loaded data: STS splits, EvalRank, retrieval collections (each may be missing from a data folder)."""

    sts: dict[str, StsPairs]
    evalrank: EvalRankData | None
    collections: tuple[Collection, ...]


@dataclass
class EncoderRow:
    """Sentence-level quality (x100) and speed of one encoder."""

    system: str
    kind: str
    sts_dev: float | None = None
    sts_test: float | None = None
    evalrank_mrr: float | None = None
    evalrank_hits1: float | None = None
    evalrank_hits3: float | None = None
    sentences_per_s: float | None = None
    device: str | None = None
    errors: list[str] = field(default_factory=list)


@dataclass
class RetrievalRow:
    """One system and ranking mode, per collection (x100): nDCG@10 and Recall@100 of what the default search shows
    (what shares nothing with the query left out: the headline), the ungated ranking's nDCG@10 (``--all``: a diagnostic),
    and the share (%) of queries answered "nothing relevant" (no result shown). A baseline has no gate: its ranking
    is what it shows, and it has no nothing-relevant share."""

    system: str
    mode: str
    ndcg10: dict[str, float | None] = field(default_factory=dict)
    recall100: dict[str, float | None] = field(default_factory=dict)
    ndcg10_all: dict[str, float | None] = field(default_factory=dict)
    nothing_relevant: dict[str, float | None] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    # the per-collection figures, each a dict keyed by collection (what merge.py joins)
    METRICS: ClassVar[tuple[str, ...]] = ("ndcg10", "recall100", "ndcg10_all", "nothing_relevant")

    def lack(self, name: str) -> None:
        """Record that collection ``name`` has no figures (its index or its searches failed)."""
        for metric in self.METRICS:
            getattr(self, metric)[name] = None

    def to_json(self, queries: Mapping[str, int]) -> dict:
        """The row with its means over collections and the share of all its queries answered nothing relevant
        (``queries``: judged queries per collection). A mean is None when any collection lacks a value (a partial
        mean would mislead)."""
        return {**asdict(self), "mean_ndcg10": _mean(self.ndcg10), "mean_recall100": _mean(self.recall100),
                "mean_ndcg10_all": _mean(self.ndcg10_all),
                "nothing_relevant_overall": _pooled(self.nothing_relevant, queries), "status": status(self.errors)}


def _mean(values: Mapping[str, float | None]) -> float | None:
    vals = [v for v in values.values() if v is not None]
    return round(float(np.mean(vals)), 2) if vals and len(vals) == len(values) else None


def _pooled(shares: Mapping[str, float | None], queries: Mapping[str, int]) -> float | None:
    """Per-collection shares (%) as one share of all their queries, so each query weighs the same."""
    known = {name: share for name, share in shares.items() if share is not None}
    if not shares or len(known) < len(shares):
        return None
    total = sum(queries[name] for name in shares)
    # a share is rounded to 0.01 %: the whole count of queries behind it comes back exactly below 10,000 queries
    counted = sum(round(share * queries[name] / 100) for name, share in known.items())
    return _pct(counted / total) if total else None


@dataclass
class ProductRow:
    """What indexing and querying cost with one method, summed or pooled over the collections."""

    method: str
    sentences: int = 0
    index_seconds: float = 0.0
    index_bytes: int = 0
    peak_rss_bytes: int | None = None
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        """Rates and percentiles, not the raw lists."""
        lat = np.asarray(self.latencies) * 1000
        return {
            "method": self.method, "status": status(self.errors), "errors": self.errors,
            "sentences": self.sentences,
            "index_sentences_per_s": round(self.sentences / self.index_seconds, 1) if self.index_seconds else None,
            "index_bytes_per_sentence": round(self.index_bytes / self.sentences, 1) if self.sentences else None,
            "peak_rss_mb": round(self.peak_rss_bytes / 2**20, 1) if self.peak_rss_bytes else None,
            "query_latency_p50_ms": round(float(np.percentile(lat, 50)), 2) if lat.size else None,
            "query_latency_p95_ms": round(float(np.percentile(lat, 95)), 2) if lat.size else None,
            "queries_timed": int(lat.size),
        }


def load_benchmarks(data: Path, sizes: Sizes, collections: Sequence[str] | None = None) -> Benchmarks:
    """Read whatever of ``sts/``, ``evalrank/``, ``retrieval/<name>/`` the data folder has (at least one);
    ``collections`` picks retrieval collections by name (an empty list: none)."""
    data = Path(data)
    sts = {
        split: load_sts(data / "sts" / f"sts-{split}.csv", limit=sizes.sts_pairs)
        for split in ("dev", "test") if (data / "sts" / f"sts-{split}.csv").is_file()
    }
    er = None
    if (data / "evalrank" / "pos_pair.txt").is_file():
        er = load_evalrank(data / "evalrank", pairs_limit=sizes.evalrank_pairs, pool_limit=sizes.evalrank_pool)
    root = data / "retrieval"
    found = sorted((p.parent.name for p in root.glob("*/corpus.jsonl")), key=_collection_order) if root.is_dir() else []
    if collections is not None:
        unknown = set(collections) - set(found)
        if unknown:
            raise ConfigError(f"no retrieval collection {', '.join(sorted(unknown))} under {root}; found {', '.join(found)}")
        found = [name for name in found if name in collections]
    loaded = tuple(
        load_collection(root / name, queries_limit=sizes.queries, distractors=sizes.distractors) for name in found
    )
    if not sts and er is None and not loaded:
        raise ConfigError(f"no benchmark data under {data}: expected sts/, evalrank/ or retrieval/<collection>/")
    return Benchmarks(sts, er, loaded)


def _collection_order(name: str) -> tuple[int, str]:
    return (RETRIEVAL_COLLECTIONS.index(name) if name in RETRIEVAL_COLLECTIONS else len(RETRIEVAL_COLLECTIONS), name)


class Allowance:
    """The time one method may still spend, and the measured speed that predicts what each part will cost.

    neural micro-tunes every text, so on a CPU it needs hours for what static does in seconds. Rather than hang or
    silently drop it, each part (an STS split, EvalRank, a collection's index) is priced from a probe of the method's
    speed in characters per second before it runs; a part that would overrun the budget is skipped with its estimate
    recorded as the reason, and what did run is charged at its real cost.
    """

    def __init__(self, seconds: float | None, chars_per_second: float, device: str) -> None:
        self.left, self.rate, self.device = seconds, max(chars_per_second, 1e-9), device

    def covers(self, chars: int, what: str, errors: list[str], say: Say) -> bool:
        """Whether ``what`` (encoding about ``chars`` characters) fits; when not, the skip and its cause are recorded."""
        need = chars / self.rate
        if self.left is None or need <= self.left:
            return True
        _fail(errors, f"{what}: skipped, needs ~{_duration(need)} at the measured {self.rate:,.0f} characters/s on "
                      f"{self.device}, over the {_duration(self.left)} left of the method's budget", say)
        return False

    def charge(self, seconds: float) -> None:
        """Take ``seconds`` spent from what is left of the budget."""
        if self.left is not None:
            self.left = max(self.left - seconds, 0.0)

    def timed(self, fn: Callable[[], object]) -> Callable[[], object]:
        """``fn`` wrapped so that its wall time is charged to the allowance."""
        def run() -> object:
            started = time.perf_counter()
            try:
                return fn()
            finally:
                self.charge(time.perf_counter() - started)
        return run


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.1f} s"
    return f"{seconds / 60:,.0f} min" if seconds < 7200 else f"{seconds / 3600:,.1f} h"


def _chars(texts: Sequence[str]) -> int:
    return sum(map(len, texts))


def run(plan: Plan, *, say: Say = log.info) -> dict:
    """Run every measurement of ``plan``; returns the JSON-able results (without the machine stamp)."""
    bench = load_benchmarks(plan.data, plan.sizes, plan.collections)
    encoders: list[EncoderRow] = []
    retrieval: list[RetrievalRow] = []
    products: list[ProductRow] = []
    with tempfile.TemporaryDirectory(prefix="quire-bench-", dir=plan.work) as tmp:
        work = Path(tmp)
        files = {c.name: product.write_files(c, work / c.name / "docs") for c in bench.collections}
        lexical = RetrievalRow("quire", "lexical")
        for method in plan.methods:
            say(f"method {method}")
            row, _, allowance = _encoder_row(method, "quire method", partial(_load_method, method), bench,
                                                  plan.sizes, say, plan.budget)
            encoders.append(row)
            if bench.collections:
                rows, prod = _product_runs(method, bench, files, work, plan, lexical, say, allowance)
                retrieval += rows
                products.append(prod)
        if bench.collections and plan.methods:
            retrieval.insert(0, lexical)
        for name in plan.baselines:
            say(f"baseline {name}")
            encoders_, retrieval_ = _baseline(name, bench, plan.sizes, say)
            encoders += encoders_
            retrieval += retrieval_
    queries = {c.name: len(c.judged_queries()) for c in bench.collections}
    return {
        "sizes": asdict(plan.sizes),
        "collections": {c.name: {"documents": len(c.documents), "queries": queries[c.name]} for c in bench.collections},
        "encoders": [_encoder_json(r) for r in encoders],
        "retrieval": [r.to_json(queries) for r in retrieval],
        "product": [p.to_json() for p in products],
    }


def _load_method(name: str) -> tuple[Encode, str]:
    from engine import embed
    from engine.embed.centre import encode_collection

    embedder = embed.load(name)
    device = getattr(embedder, "device", None)  # the GPU methods say where they run; the static method is numpy
    # Each call's texts are one collection, as `quire embed` takes a file's lines (engine.embed.centre).
    return partial(encode_collection, embedder), "CPU" if device is None else device.description


def _encoder_row(name: str, kind: str, load: Callable[[], tuple[Encode, str]], bench: Benchmarks, sizes: Sizes,
                 say: Say, budget: float | None = None) -> tuple[EncoderRow, Encode | None, Allowance]:
    """STS, EvalRank and speed of one encoder; each step that raises is recorded and the others still run."""
    row = EncoderRow(name, kind)
    try:
        encode, row.device = load()
    except Exception as e:  # any failure to load is a result to report, not a crash of the whole benchmark
        _fail(row.errors, f"load: {e}", say)
        return row, None, Allowance(None, 1.0, "-")
    sample = _speed_sample(bench, sizes)
    probe = _attempt(row.errors, "speed probe", say, lambda: _probe(encode, sample))
    # without a speed the parts cannot be priced: run them all and let each record its own failure
    allowance = Allowance(budget if probe else None, probe or 1.0, row.device or "CPU")
    for split, pairs in bench.sts.items():
        if allowance.covers(_chars(pairs.first) + _chars(pairs.second), f"STS-B {split}", row.errors, say):
            value = _attempt(row.errors, f"STS-B {split}", say, allowance.timed(partial(sts_spearman, encode, pairs)))
            setattr(row, f"sts_{split}", _pct(value))
    if bench.evalrank is not None and allowance.covers(_chars(bench.evalrank.pool), "EvalRank", row.errors, say):
        score = _attempt(row.errors, "EvalRank", say, allowance.timed(partial(evalrank, encode, bench.evalrank)))
        if score is not None:
            row.evalrank_mrr, row.evalrank_hits1, row.evalrank_hits3 = _pct(score.mrr), _pct(score.hits1), _pct(score.hits3)
    # at most about a minute of encoding for the speed figure, so a slow method still gets one
    sample = sample[: max(_PROBE_TEXTS, min(len(sample), int(60 * probe / max(_chars(sample) / len(sample), 1))))]
    speed = _attempt(row.errors, "speed", say, allowance.timed(lambda: sentences_per_second(encode, sample)))
    row.sentences_per_s = None if speed is None else round(speed, 1)
    say(f"  {name}: STS-B test {row.sts_test}, EvalRank MRR {row.evalrank_mrr}, {row.sentences_per_s} sentences/s")
    return row, encode, allowance


# Texts in the speed probe that prices each part of a method's run (after as many again to warm up).
_PROBE_TEXTS = 32


def _speed_sample(bench: Benchmarks, sizes: Sizes) -> list[str]:
    """The speed figure's sentences: the EvalRank pool's first ones (as the reference numbers were measured), else
    STS sentences."""
    texts = list(bench.evalrank.pool) if bench.evalrank is not None else [s for p in bench.sts.values() for s in p.first]
    return texts[: sizes.encode_sentences]


def _probe(encode: Encode, sample: Sequence[str]) -> float:
    """Characters per second of ``encode`` on a few sample texts, after a warm-up call on as many others."""
    warm, timed = sample[:_PROBE_TEXTS], sample[_PROBE_TEXTS : 2 * _PROBE_TEXTS] or sample[:_PROBE_TEXTS]
    encode(list(warm))
    started = time.perf_counter()
    encode(list(timed))
    return _chars(timed) / max(time.perf_counter() - started, 1e-9)


def _product_runs(method: str, bench: Benchmarks, files: dict[str, product.Files], work: Path, plan: Plan,
                  lexical: RetrievalRow, say: Say, allowance: Allowance) -> tuple[list[RetrievalRow], ProductRow]:
    """Index each collection with ``method`` via `quire index`, then query it in semantic and hybrid mode (and in
    lexical mode with the first method that builds, since lexical ranking does not depend on the method), each
    query both as the default search shows it and ungated."""
    semantic, hybrid = RetrievalRow(method, "semantic"), RetrievalRow(method, "hybrid")
    prod = ProductRow(method)
    for collection in bench.collections:
        name = collection.name
        queries = {q: collection.queries[q] for q in collection.judged_queries()}
        text = _chars([t for title, body in collection.documents.values() for t in (title, body)])
        built = None
        if allowance.covers(text, f"index {name}", prod.errors, say):
            built = _attempt(prod.errors, f"index {name}", say, allowance.timed(partial(
                product.build, files[name], work / name / f"index-{method}", method, timeout=plan.timeout)))
        wanted = [semantic, hybrid] + ([lexical] if name not in lexical.ndcg10 else [])
        if built is None:
            for row in (semantic, hybrid):
                row.lack(name)
                row.errors.append(f"{name}: no index ({prod.errors[-1] if prod.errors else 'failed'})")
            continue
        prod.sentences += built.sentences
        prod.index_seconds += built.index_seconds
        prod.index_bytes += built.bytes_on_disk
        prod.peak_rss_bytes = max(prod.peak_rss_bytes or 0, built.peak_rss_bytes or 0) or None
        where = (name, built, files[name], queries, plan.timeout, say)
        for row in wanted:
            shown, ungated = _search(row, product.Gate.SHOWN, *where), _search(row, product.Gate.ALL, *where)
            _score_answers(row, collection, shown, ungated)
        timed = _attempt(prod.errors, f"latency {name}", say,
                         partial(product.latencies, built, list(queries.values()), "hybrid"))
        if timed is not None:
            prod.latencies += timed.tolist()
        say(f"  {name}: {built.sentences:,} sentences; nDCG@10 shown: semantic {semantic.ndcg10.get(name)} "
            f"hybrid {hybrid.ndcg10.get(name)} lexical {lexical.ndcg10.get(name)}")
    return [semantic, hybrid], prod


def _search(row: RetrievalRow, gate: product.Gate, name: str, built: product.Built, files: product.Files,
            queries: dict[str, str], timeout: float, say: Say) -> product.Answers | None:
    """``row``'s mode's answers on collection ``name`` via `quire search` (None, the failure recorded, on failure)."""
    return _attempt(row.errors, f"search {name} {row.mode} ({gate.value})", say, lambda: product.search(
        built, files, queries, row.mode, timeout=timeout, gate=gate))


def _baseline(name: str, bench: Benchmarks, sizes: Sizes, say: Say) -> tuple[list[EncoderRow], list[RetrievalRow]]:
    if name == "bm25":
        row = RetrievalRow("BM25 (bm25s, whole documents)", "lexical")
        for c in bench.collections:
            _score_ranking(row, c, _attempt(row.errors, f"BM25 {c.name}", say,
                                            partial(baselines.bm25_rankings, c, c.judged_queries())))
        return [], [row] if bench.collections else []
    if name == "model2vec":
        enc_row, encode, _ = _encoder_row("model2vec distill (PCA 256)", "baseline", lambda: (
            baselines.model2vec_distill(), "CPU"), bench, sizes, say)
        row = RetrievalRow("model2vec distill (whole documents)", "semantic")
        for c in bench.collections:
            rankings = None if encode is None else _attempt(
                row.errors, f"model2vec {c.name}", say, partial(baselines.dense_rankings, encode, c, c.judged_queries()))
            _score_ranking(row, c, rankings)
        return [enc_row], [row] if bench.collections else []
    raise ConfigError(f"unknown baseline {name!r}; choose from bm25, model2vec")


def _score_answers(row: RetrievalRow, collection: Collection, shown: product.Answers | None,
                   ungated: product.Answers | None) -> None:
    """Into ``row``: nDCG@10 and Recall@100 of what was shown, nDCG@10 of the ungated ranking, and the share of the
    judged queries answered nothing relevant (None for each part whose search failed)."""
    name, judged = collection.name, collection.judged_queries()
    row.ndcg10[name], row.recall100[name] = _scores(collection, None if shown is None else shown.rankings)
    row.ndcg10_all[name] = _scores(collection, None if ungated is None else ungated.rankings)[0]
    row.nothing_relevant[name] = None if shown is None else _pct(
        len(shown.nothing_relevant.intersection(judged)) / len(judged))


def _score_ranking(row: RetrievalRow, collection: Collection, rankings: dict[str, list[str]] | None) -> None:
    """Into a baseline's ``row``: it has no gate, so its one ranking is both what it shows and its ungated one."""
    name = collection.name
    row.ndcg10[name], row.recall100[name] = _scores(collection, rankings)
    row.ndcg10_all[name] = row.ndcg10[name]


def _scores(collection: Collection, rankings: dict[str, list[str]] | None) -> tuple[float | None, float | None]:
    """:func:`score` x100, or None twice when the rankings failed."""
    if rankings is None:
        return None, None
    ndcg, recall = score(collection, rankings)
    return _pct(ndcg), _pct(recall)


def score(collection: Collection, rankings: dict[str, list[str]]) -> tuple[float, float]:
    """Mean nDCG@10 and Recall@100 over the collection's judged queries (a query without a ranking scores 0)."""
    judged = collection.judged_queries()
    ndcg = float(np.mean([ndcg_at(rankings.get(q, []), collection.qrels[q], 10) for q in judged]))
    return ndcg, float(np.mean([recall_at(rankings.get(q, []), collection.qrels[q], 100) for q in judged]))


def _attempt(errors: list[str], what: str, say: Say, fn: Callable[[], object]):
    try:
        return fn()
    except Exception as e:  # recorded in the results: a failing step is a finding, not a reason to stop
        log.debug("%s failed", what, exc_info=True)
        _fail(errors, f"{what}: {type(e).__name__}: {e}", say)
        return None


def _fail(errors: list[str], message: str, say: Say) -> None:
    errors.append(message.splitlines()[0][:300] if message else "failed")
    say(f"  FAILED {message.splitlines()[0][:300]}")
    log.debug("%s", traceback.format_exc())


def status(errors: Sequence[str]) -> str:
    """"ok"; "skipped" when every problem is a part its budget did not cover (Allowance); else "failed"."""
    if not errors:
        return "ok"
    return "skipped" if all("skipped" in e for e in errors) else "failed"


def _pct(value: float | None) -> float | None:
    return None if value is None else round(100.0 * float(value), 2)


def _encoder_json(row: EncoderRow) -> dict:
    return {**asdict(row), "status": status(row.errors)}


def run_and_report(plan: Plan, out: Path, *, say: Say = log.info) -> tuple[dict, Path, Path]:
    """Run ``plan``, stamp the results with the machine and commit, write ``latest.json`` and ``latest.md``."""
    from engine.eval import report

    stamp = report.stamp(REPO)
    results = {"stamp": stamp, "quick": plan.sizes != FULL, **run(plan, say=say)}
    json_path, md_path = report.write(results, out)
    return results, json_path, md_path


def evaluate(*, data: Path | None = None, methods: Sequence[str] | None = None, quick: bool = False,
             baselines: Sequence[str] = Plan.baselines, collections: Sequence[str] | None = None,
             timeout: float = Plan.timeout, budget: float | None = None, out: Path | None = None,
             say: Say = log.info) -> tuple[dict, Path, Path]:
    """What `quire eval` runs: every benchmark of ``data`` (None: :func:`default_data_dir`) for ``methods`` (None:
    every registered one) and ``baselines``, subsampled when ``quick``, with ``timeout`` seconds per subprocess and
    ``budget`` seconds per method; the results, and the ``latest.json`` and ``latest.md`` written under ``out``
    (None: :func:`default_results_dir`)."""
    plan = Plan(data=data or default_data_dir(), methods=methods_from(methods), sizes=QUICK if quick else FULL,
                baselines=tuple(baselines), collections=None if collections is None else tuple(collections),
                timeout=timeout, budget=budget)
    return run_and_report(plan, out or default_results_dir(), say=say)


def methods_from(names: Sequence[str] | None) -> tuple[str, ...]:
    """The methods to run: the given names (possibly none), or with None every registered method."""
    from engine import embed

    return tuple(names) if names is not None else tuple(embed.names())
