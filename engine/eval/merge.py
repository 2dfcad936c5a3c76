"""Several `quire eval` runs as one report.

A run may be split by collection (in parallel on a machine with many cores, or one after another to fit a time
limit); every part is measured by the same harness, so the rows join exactly. Encoder rows do not depend on the
collection: the first part that measured a method supplies its row. Retrieval rows join their per-collection values
(each of ``RetrievalRow.METRICS`` from the first part that has it) and their means are recomputed (None while any
collection lacks a value). A part's errors are kept unless a later part supplied every value that part lacked.
Product rows pool latencies that only their own run saw, so they stay one per part, named with the part's
collections.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.eval.harness import RetrievalRow


def merge(parts: Sequence[dict]) -> dict:
    """One results dict (the shape :func:`engine.eval.harness.run_and_report` writes) from ``parts``."""
    if not parts:
        raise ValueError("nothing to merge")
    collections: dict[str, dict] = {}
    for part in parts:
        collections.update(part["collections"])
    return {
        "stamp": {**parts[0]["stamp"], "command": " ; ".join(p["stamp"]["command"] for p in parts)},
        "quick": any(p["quick"] for p in parts),
        "sizes": parts[0]["sizes"],
        "collections": collections,
        "encoders": _encoders(parts),
        "retrieval": _retrieval(parts),
        "product": [{**row, "method": f"{row['method']} ({', '.join(part['collections'])})"}
                    for part in parts for row in part["product"]],
    }


def _encoders(parts: Sequence[dict]) -> list[dict]:
    chosen: dict[str, dict] = {}
    for part in parts:
        for row in part["encoders"]:
            held = chosen.get(row["system"])
            if held is None or (held["status"] != "ok" and row["status"] == "ok"):
                chosen[row["system"]] = row
    return list(chosen.values())


def _retrieval(parts: Sequence[dict]) -> list[dict]:
    merged: dict[tuple[str, str], RetrievalRow] = {}
    for part in parts:
        for row in part["retrieval"]:
            into = merged.setdefault((row["system"], row["mode"]), RetrievalRow(row["system"], row["mode"]))
            for metric, name, value in _figures(row):
                if getattr(into, metric).get(name) is None:
                    getattr(into, metric)[name] = value
    for part in parts:
        for row in part["retrieval"]:
            into = merged[row["system"], row["mode"]]
            if any(getattr(into, metric)[name] is None for metric, name, value in _figures(row) if value is None):
                into.errors.extend(row["errors"])
    queries = {name: c["queries"] for part in parts for name, c in part["collections"].items()}
    return [row.to_json(queries) for row in merged.values()]


def _figures(row: dict) -> list[tuple[str, str, float | None]]:
    """(metric, collection, value) of every figure a results row holds (a run older than a metric, or a baseline's
    row, lacks some)."""
    return [(metric, name, value) for metric in RetrievalRow.METRICS for name, value in row.get(metric, {}).items()]
