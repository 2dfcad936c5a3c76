"""Stamp results with where and when they were measured, and write them as JSON and as a markdown table."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path


def stamp(repo: Path) -> dict:
    """Date (UTC), CPU model and cores, GPU (if torch sees one), git commit (``+dirty`` with uncommitted changes)."""
    from engine import __version__

    return {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "gpu": _gpu(),
        "commit": _git_commit(repo),
        "python": platform.python_version(),
        "quire": __version__,
        "command": " ".join(Path(sys.argv[0]).name.split() + [portable(a, repo) for a in sys.argv[1:]]),
    }


def portable(arg: str, repo: Path) -> str:
    """A command-line argument as it would be typed in any checkout: a path beside the repository (``../shared``)
    relative to it, anything else as given."""
    if os.path.isabs(arg) and Path(arg).resolve().is_relative_to(repo.resolve().parent):
        return os.path.relpath(arg, repo)
    return arg


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _gpu() -> str | None:
    """NVIDIA GPUs as nvidia-smi names them (asking torch would cost seconds of import for the same answer)."""
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        found = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                               text=True, timeout=30, check=True).stdout.split("\n")
    except (OSError, subprocess.SubprocessError):
        return None
    return ", ".join(name.strip() for name in found if name.strip()) or None


def _git_commit(repo: Path) -> str | None:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()

    try:
        commit = git("rev-parse", "--short", "HEAD")
        return commit + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def write(results: dict, out: Path) -> tuple[Path, Path]:
    """``latest.json`` and ``latest.md`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / "latest.json", out / "latest.md"
    json_path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    md_path.write_text(markdown(results), encoding="utf-8")
    return json_path, md_path


def markdown(results: dict) -> str:
    """The tables docs/benchmarks.md links to; failed steps show as FAILED with their messages listed below."""
    s = results["stamp"]
    lines = [
        "# quire benchmark results",
        "",
        f"Measured {s['date']} on {s['cpu']} ({s['cores']} cores), GPU: {s['gpu'] or 'none'}; "
        f"commit {s['commit']}; Python {s['python']}. Command: `{s['command']}`.",
        "",
    ]
    if results.get("quick"):
        lines += ["**Quick run (subsampled data): not comparable with full-run numbers.**", ""]
    lines += _encoder_table(results["encoders"]) + _retrieval_tables(results) + _product_table(results["product"])
    # a skipped index shows in the product row and in both retrieval rows built on it: list each message once
    failures = list(dict.fromkeys((r.get("system") or r.get("method"), e) for key in ("encoders", "retrieval", "product")
                                  for r in results[key] for e in r["errors"]))
    if failures:
        lines += ["## Failures and skips", ""] + [f"- {name}: {error}" for name, error in failures] + [""]
    lines += [
        "STS-B: Spearman x100 of cosine vs gold. EvalRank: sentence level, pool mean-centred then L2-normalised, "
        "cosine, positives in both directions, query excluded (Wang et al., 2022, Sec. 4). "
        + (_GATED_METHOD if _gated(results["retrieval"]) else _UNGATED_METHOD) + " nDCG gains are 2^rel - 1.",
        "",
    ]
    return "\n".join(lines)


_GATED_METHOD = (
    "Retrieval: quire rows run through `quire index` / `quire search --queries -k 100`; the headline tables score "
    "what the default search shows a user (results the relevance gate judged weak are cut; a query answered "
    "\"nothing relevant\" has no results and scores 0), the diagnostic table the ungated ranking (`--all`). Baseline "
    "rows rank whole documents and have no gate."
)
_UNGATED_METHOD = (
    "Retrieval: quire rows run through `quire index` / `quire search --queries -k 100 --all` (the ungated ranking); "
    "baseline rows rank whole documents."
)


def _gated(rows: list[dict]) -> bool:
    """Whether retrieval rows score the default search apart from the ungated ranking (results written before that
    have the ungated ranking's figures only)."""
    return any(r.get("ndcg10_all") for r in rows)


def _fmt(value, digits: int = 2, row: dict | None = None) -> str:
    """A number, or why there is none: "skipped" when every error of the row is a budget skip, else FAILED."""
    if value is None:
        skipped = row is not None and row["errors"] and all("skipped" in e for e in row["errors"])
        return "skipped" if skipped else "FAILED"
    return f"{value:,.{digits}f}" if isinstance(value, float) else f"{value:,}"


def _table(title: str, header: list[str], rows: list[list[str]], notes: tuple[str, ...] = ()) -> list[str]:
    """A markdown section: title, one header row, the rows, then any notes; nothing at all when there are no rows."""
    if not rows:
        return []
    return ([f"## {title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            + ["| " + " | ".join(r) + " |" for r in rows] + [""] + [*notes, *([""] if notes else [])])


def _encoder_table(rows: list[dict]) -> list[str]:
    return _table(
        "Sentence embeddings",
        ["encoder", "STS-B dev", "STS-B test", "EvalRank MRR", "Hits@1", "Hits@3", "sentences/s", "device"],
        [[r["system"], *(_fmt(r[k], row=r) for k in ("sts_dev", "sts_test", "evalrank_mrr", "evalrank_hits1",
                                                    "evalrank_hits3")),
          _fmt(r["sentences_per_s"], 0, r), r["device"] or "-"] for r in rows],
    )


def _retrieval_tables(results: dict) -> list[str]:
    rows = results["retrieval"]
    if not rows:
        return []
    names = list(results["collections"])
    gated = _gated(rows)
    shown = "default search (what a user gets, relevance gate included)" if gated else "ungated ranking (`--all`)"
    out = []
    for key, title in (("ndcg10", "nDCG@10"), ("recall100", "Recall@100")):
        notes = _GATED_NOTE if gated and key == "ndcg10" else ()
        out += _collection_table(f"Retrieval {title} x100: {shown}", names, rows, key, notes)
    out += _collection_table("Retrieval nDCG@10 x100: ungated ranking (diagnostic)", names,
                             [r for r in rows if r.get("ndcg10_all")], "ndcg10_all", _UNGATED_NOTE,
                             mean="mean_ndcg10_all")
    out += _collection_table("Queries answered nothing relevant (% of judged queries)", names,
                             [r for r in rows if r.get("nothing_relevant")], "nothing_relevant", _NOTHING_NOTE,
                             mean="nothing_relevant_overall", mean_header="all queries")
    sizes = ", ".join(f"{n} {c['documents']:,} docs / {c['queries']} queries" for n, c in results["collections"].items())
    return out + [f"Collections: {sizes}.", ""]


_GATED_NOTE = (
    "Each query as `quire search -k 100` answers it without `--all`: only the results the relevance gate did not "
    "judge weak, so a query answered \"nothing relevant\" scores 0. Baselines have no gate: their whole ranking.",
)
_UNGATED_NOTE = (
    "The same queries with `--all` (weak results kept): the ranking alone, which no user sees by default. The gap to "
    "the default search is what the gate costs (or gains) in ranking quality; baselines repeat their figures.",
)
_NOTHING_NOTE = (
    "Share of the judged queries (every one has a relevant document) for which the default search showed no result; "
    "\"all queries\" pools the collections, each query weighing the same.",
)


def _collection_table(title: str, names: list[str], rows: list[dict], key: str, notes: tuple[str, ...] = (), *,
                      mean: str | None = None, mean_header: str = "mean") -> list[str]:
    """One row per system and mode: ``row[key]`` per collection, then ``row[mean]`` (default ``mean_<key>``)."""
    mean = mean or f"mean_{key}"
    return _table(title, ["system", "mode", *names, mean_header],
                  [[r["system"], r["mode"], *(_fmt(r[key].get(n), row=r) for n in names), _fmt(r.get(mean), row=r)]
                   for r in rows], notes)


def _product_table(rows: list[dict]) -> list[str]:
    return _table(
        "Indexing and querying (through the product)",
        ["method", "sentences", "index sentences/s", "index bytes/sentence", "peak RSS MB", "query p50 ms",
         "query p95 ms"],
        [[r["method"], _fmt(r["sentences"], row=r), _fmt(r["index_sentences_per_s"], 0, r),
          _fmt(r["index_bytes_per_sentence"], 0, r), _fmt(r["peak_rss_mb"], 0, r), _fmt(r["query_latency_p50_ms"], row=r),
          _fmt(r["query_latency_p95_ms"], row=r)] for r in rows],
        ("Query latency: interactive hybrid queries (k = 10) through `engine.Index.search`, model loaded.",),
    )
