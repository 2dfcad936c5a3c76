"""Several `quire eval` runs as one report.

A run may be split by collection (in parallel on a machine with many cores, or one after another to fit a time
limit); every part is measured by the same harness, so the rows join exactly. Encoder rows do not depend on the
collection: the first part that measured a method supplies its row. Retrieval rows join their per-collection values
and their means are recomputed (None while any collection lacks a value). A part's errors are kept unless a later
part supplied every value that part lacked. Product rows pool latencies that only their own run saw, so they stay
one per part, named with the part's collections.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.eval.harness import RetrievalRow, status


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
            for name, value in row["ndcg10"].items():
                if into.ndcg10.get(name) is None:
                    into.ndcg10[name], into.recall100[name] = value, row["recall100"].get(name)
    for part in parts:
        for row in part["retrieval"]:
            lacked = [n for n, v in row["ndcg10"].items() if v is None]
            if any(merged[row["system"], row["mode"]].ndcg10[n] is None for n in lacked):
                merged[row["system"], row["mode"]].errors.extend(row["errors"])
    out = []
    for row in merged.values():
        ndcg, recall = row.means()
        out.append({"system": row.system, "mode": row.mode, "ndcg10": row.ndcg10, "recall100": row.recall100,
                    "errors": row.errors, "mean_ndcg10": ndcg, "mean_recall100": recall, "status": status(row.errors)})
    return out
