"""The command-line contract that benchmarks and other tools rely on: every command's JSON, help and errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from app.cli import cli

REPO = Path(__file__).resolve().parent.parent
RIGEL = "Rigel is a blue supergiant star in the constellation of Orion."
RESULT_KEYS = {"path", "score", "sentence", "start", "end", "page", "context", "facets"}


def run(*args: str, env: dict | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), env=env)
    return result.exit_code, result.output


def run_json(*args: str, env: dict | None = None):
    code, out = run(*args, "--json", env=env)
    assert code == 0, out
    return json.loads(out)


@pytest.fixture
def db(corpus: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "index"
    run_json("index", str(corpus), "--db", str(folder), "--workers", "0")
    return folder


def test_index_json(corpus: Path, tmp_path: Path) -> None:
    report = run_json("index", str(corpus), "--db", str(tmp_path / "i"), "--workers", "0")
    assert set(report) >= {"documents", "sentences", "skipped", "seconds", "method", "unchanged", "removed"}
    assert (report["documents"], report["skipped"], report["method"]) == (5, [], "static")
    assert report["sentences"] > 5 and report["seconds"] >= 0
    again = run_json("index", "--db", str(tmp_path / "i"), "--workers", "0")
    assert (again["documents"], again["unchanged"]) == (0, 5)


def test_index_text_output(corpus: Path, tmp_path: Path) -> None:
    code, out = run("index", str(corpus), "--db", str(tmp_path / "i"), "--workers", "0")
    assert code == 0 and "5 documents" in out and "[static]" in out


def test_search_json(db: Path) -> None:
    out = run_json("search", RIGEL, "--db", str(db), "-k", "2")
    assert out["query"] == RIGEL and out["mode"] == "hybrid" and out["method"] == "static"
    assert 1 <= len(out["results"]) <= 2
    first = out["results"][0]
    assert set(first) >= RESULT_KEYS
    assert first["path"].endswith("rigel.txt") and first["sentence"] == RIGEL
    assert isinstance(first["start"], int) and first["end"] > first["start"]
    assert set(first["context"]) == {"before", "after"} and first["context"]["after"]
    assert first["facets"] == [] or isinstance(first["facets"], list)
    assert {"cosine", "bm25", "matched_terms", "fusion", "contributions"} <= set(first["explanation"])


@pytest.mark.parametrize("mode", ["semantic", "lexical"])
def test_search_modes(db: Path, mode: str) -> None:
    out = run_json("search", "echolocation porpoises", "--db", str(db), "--mode", mode, "-k", "1")
    assert out["mode"] == mode
    assert out["results"][0]["path"].endswith("porpoise.md")
    assert (out["results"][0]["similarity"] is None) == (mode == "lexical")


def test_search_text_output(db: Path) -> None:
    code, out = run("search", RIGEL, "--db", str(db), "-k", "1")
    assert code == 0 and out.startswith("1. ") and "rigel.txt" in out and "similarity" in out
    assert "not in any document" not in out


def test_search_text_output_shows_the_ranking_score(db: Path) -> None:
    # the number before each result's similarity is its confidence, with its word: it never rises down the list
    code, out = run("search", "echolocation porpoises", "--db", str(db), "--all")
    cards = [re.match(r"\s+(\d+)% (strong|possible|unlikely)", line) for line in out.splitlines()]
    scores = [int(c.group(1)) for c in cards if c]
    assert code == 0 and len(scores) > 1 and scores == sorted(scores, reverse=True) and scores[0] >= 70
    assert [c.group(2) for c in cards if c][0] == "strong"


def test_search_text_output_says_the_words_are_the_documents(db: Path) -> None:
    # the query's words a document holds need not all be in the one sentence shown: the line says where they are
    code, out = run("search", "echolocation porpoises", "--db", str(db), "-k", "1")
    assert code == 0 and " · in the document: " in out and "words:" not in out, out


def test_search_names_the_query_words_no_document_holds(db: Path) -> None:
    code, out = run("search", "porpoises zeppelin", "--db", str(db), "-k", "1")
    assert code == 0 and "porpoise.md" in out
    assert out.rstrip().endswith("not in any document: zeppelin")
    assert run_json("search", "porpoises zeppelin", "--db", str(db), "-k", "1")["missing"] == ["zeppelin"]


def test_search_suggests_the_indexed_spelling_of_a_misspelt_word(db: Path) -> None:
    # the correction is searched, and said; --exact searches the query as typed
    code, out = run("search", "echolocaton porpoises", "--db", str(db), "-k", "1")
    assert code == 0 and out.startswith("showing results for “echolocation porpoises”; search instead for "
                                        "“echolocaton porpoises” with --exact\n1. Porpoises"), out
    code, out = run("search", "echolocaton porpoises", "--db", str(db), "-k", "1", "--exact")
    assert code == 0 and "not in any document: echolocaton\ndid you mean: echolocation porpoises" in out
    assert run_json("search", "echolocaton", "--db", str(db), "--exact")["did_you_mean"] == "echolocation"
    assert run_json("search", "echolocaton", "--db", str(db))["corrected_from"] == "echolocaton"


def test_batch_search(db: Path, tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        json.dumps({"id": "star", "text": RIGEL}) + "\n\n"
        + json.dumps({"id": 7, "text": "   "}) + "\n"
        + json.dumps({"id": "pasta", "text": "spaghetti al dente"}) + "\n"
    )
    code, out = run("search", "--queries", str(queries), "--db", str(db), "-k", "1")
    assert code == 0, out
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["id"] for line in lines] == ["star", 7, "pasta"]
    assert lines[0]["results"][0]["path"].endswith("rigel.txt")
    assert set(lines[0]["results"][0]) >= RESULT_KEYS
    assert "empty" in lines[1]["error"] and lines[1]["results"] == []
    assert lines[2]["results"][0]["path"].endswith("pasta.html")


def test_no_explain_keeps_the_ranking_and_drops_facets(db: Path, tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in
                               enumerate([RIGEL, "echolocation porpoises", "book a hospital appointment"])))
    common = ("search", "--queries", str(queries), "--db", str(db), "-k", "5", "--all")
    explained = [json.loads(line) for line in run(*common)[1].splitlines()]
    code, out = run(*common, "--no-explain")
    assert code == 0, out
    plain = [json.loads(line) for line in out.splitlines()]
    assert any(r["facets"] for line in explained for r in line["results"])  # so the comparison below can fail
    for full, bare in zip(explained, plain, strict=True):
        assert [(r["path"], r["score"], r["sentence"], r["start"], r["end"]) for r in bare["results"]] == [
            (r["path"], r["score"], r["sentence"], r["start"], r["end"]) for r in full["results"]]
        assert all(r["facets"] == [] and r["explanation"]["facets"] is None for r in bare["results"])


def test_batch_search_answers_every_line_and_marks_a_malformed_one(db: Path, tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"id": 1, "text": RIGEL}) + "\n{not json\n" + "[" * 100_000 + "\n"
                       + json.dumps({"id": 4, "text": RIGEL}) + "\n")
    code, out = run("search", "--queries", str(queries), "--db", str(db), "--no-explain")
    lines = out.splitlines()
    answers = [json.loads(line) for line in lines[:4]]
    assert [a["id"] for a in answers] == [1, None, None, 4] and answers[0]["results"] and answers[3]["results"]
    assert answers[1]["line"] == 2 and "not JSON" in answers[1]["error"]
    assert answers[2]["line"] == 3 and "nests too deeply" in answers[2]["error"]  # was a RecursionError
    assert code == 1 and lines[4:] == [f"error: 2 lines of {queries} could not be read as queries (see their "
                                       f'"error" lines); the others were answered']


def test_search_needs_text_or_queries(db: Path) -> None:
    code, out = run("search", "--db", str(db))
    assert code == 2 and "--queries" in out


PORPOISE = "They use echolocation to hunt fish and squid in murky coastal water."


def test_search_like_a_file_lists_the_other_documents(db: Path, corpus: Path) -> None:
    porpoise = corpus / "animals" / "porpoise.md"
    code, out = run("search", "--like", str(porpoise), "--db", str(db), "--all")  # unrelated topics: unlikely ones
    first, rest = out.split("\n", 1)
    assert code == 0 and first.startswith("no strong match for “Porpoises are small toothed whales") and len(first) < 110
    assert first.endswith("…”; the closest passages:") and rest.startswith("1. ") and "similarity" in out, out
    assert "porpoise.md" not in out and "rigel.txt" in out and "budget.txt" in out
    # nothing else in the folder is about sea animals: by default it says so, and each listed card is unlikely
    gated = run_json("search", "--like", str(porpoise), "--db", str(db))
    assert gated["nothing_relevant"] and gated["answer"] in ("closest", "nothing")
    assert all(r["strength"] == "unlikely" for r in gated["results"])
    assert len(gated["results"]) + gated["weak_hidden"] == 4
    found = run_json("search", "--like", str(porpoise), "--db", str(db), "--all")
    assert found["mode"] == "semantic"  # by meaning, where a typed query is hybrid
    assert len(found["results"]) == 4 and set(found["results"][0]) >= RESULT_KEYS
    assert all(not r["path"].endswith("porpoise.md") for r in found["results"])
    assert "Porpoises are small toothed whales" in found["query"]


def test_search_like_a_sentence_by_the_ordinal_json_prints(db: Path) -> None:
    hit = run_json("search", PORPOISE, "--db", str(db), "-k", "1")["results"][0]
    assert hit["sentence"] == PORPOISE
    found = run_json("search", "--like", f"{hit['path']}#{hit['ordinal']}", "--db", str(db), "--mode", "lexical",
                     "--all")
    assert found["query"] == PORPOISE and found["mode"] == "lexical"
    assert found["results"] and hit["path"] not in [r["path"] for r in found["results"]]


def test_search_like_a_page(corpus: Path, tmp_path: Path) -> None:
    from docgen import PDF_PAGE2_SENTENCE, make_pdf

    pdf = make_pdf(corpus)
    db = tmp_path / "with-pdf"
    run_json("index", str(corpus), "--db", str(db), "--workers", "0")
    found = run_json("search", "--like", f"{pdf}:2", "--db", str(db), "--all")
    assert found["query"] == PDF_PAGE2_SENTENCE
    assert found["results"] and str(pdf) not in [r["path"] for r in found["results"]]
    code, out = run("search", "--like", f"{pdf}:9", "--db", str(db))
    assert code == 1 and out.startswith("error: tides.pdf has no page 9") and "1-5" in out


@pytest.mark.parametrize("extra", [["TEXT"], ["--queries", "QUERIES"]])
def test_search_like_is_instead_of_text_and_queries(db: Path, tmp_path: Path, corpus: Path, extra: list[str]) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"id": 1, "text": RIGEL}) + "\n")
    extra = [{"TEXT": RIGEL, "QUERIES": str(queries)}.get(a, a) for a in extra]
    code, out = run("search", *extra, "--like", str(corpus / "finance" / "budget.txt"), "--db", str(db))
    assert code == 2 and "give one of TEXT, --queries FILE or --like FILE" in out


def test_search_like_errors_are_one_line(db: Path, corpus: Path) -> None:
    code, out = run("search", "--like", str(corpus / "nowhere.txt"), "--db", str(db))
    assert code == 1 and out.startswith("error: ") and "is not in the index" in out and "Traceback" not in out
    code, out = run("search", "--like", f"{corpus / 'finance' / 'budget.txt'}#99", "--db", str(db))
    assert code == 1 and "budget.txt has no sentence 99" in out


def test_status_json(db: Path, corpus: Path) -> None:
    out = run_json("status", "--db", str(db))
    assert {"folder", "method", "fingerprint", "documents", "indexed", "skipped", "failed", "sentences", "roots",
            "files", "bytes_on_disk"} <= set(out)
    assert (out["documents"], out["indexed"], out["method"]) == (5, 5, "static")
    assert out["roots"] == [str(corpus)] and out["bytes_on_disk"] > 0
    assert {Path(f["path"]).name for f in out["files"]} >= {"rigel.txt", "pasta.html"}
    assert all({"path", "status", "reason"} <= set(f) for f in out["files"])


def test_status_text(db: Path) -> None:
    code, out = run("status", "--db", str(db))
    assert code == 0 and "5 indexed" in out and "[static]" in out


def test_remove_json(db: Path, corpus: Path) -> None:
    assert run_json("remove", str(corpus / "cooking"), "--db", str(db)) == {"removed": 1}
    out = run_json("search", "spaghetti al dente", "--db", str(db), "--all")
    assert not any(r["path"].endswith("pasta.html") for r in out["results"])
    assert run_json("status", "--db", str(db))["documents"] == 4


def test_embed_writes_unit_rows(tmp_path: Path) -> None:
    texts = tmp_path / "texts.txt"
    texts.write_text(f"{RIGEL}\nporpoises hunt fish\n\n")
    output = tmp_path / "vectors.npy"
    code, out = run("embed", "--input", str(texts), "--output", str(output))
    assert code == 0, out
    vectors = np.load(output)
    assert vectors.dtype == np.float32 and vectors.shape[0] == 3  # the blank third line is a (zero) row too
    assert np.allclose(np.linalg.norm(vectors[:2], axis=1), 1.0, atol=1e-5)
    assert np.all(vectors[2] == 0)


def test_eval_runs_what_its_options_ask(tmp_path: Path) -> None:
    """`quire eval` hands its options to engine.evaluate: no method, the BM25 baseline, one collection, subsampled."""
    out = tmp_path / "results"
    code, output = run("eval", "--data", str(Path(__file__).parent / "data" / "bench"), "--methods", "",
                       "--baselines", "bm25", "--collections", "tiny", "--quick", "--out", str(out))
    assert code == 0, output
    results = json.loads((out / "latest.json").read_text(encoding="utf-8"))
    assert results["quick"] is True and list(results["collections"]) == ["tiny"]
    assert results["encoders"] == [] and [row["system"] for row in results["retrieval"]] == [
        "BM25 (bm25s, whole documents)"]
    assert "Retrieval nDCG@10" in (out / "latest.md").read_text(encoding="utf-8")


def test_missing_index_is_one_readable_line(tmp_path: Path) -> None:
    for command in (["search", RIGEL], ["status"], ["remove", "x"]):
        code, out = run(*command, "--db", str(tmp_path / "none"))
        assert code == 1 and out.startswith("error: no index") and "quire index" in out


def test_method_mismatch_is_an_error(db: Path) -> None:
    code, out = run("search", RIGEL, "--db", str(db), "--method", "sbert")
    assert code == 1 and "error:" in out and "static" in out


def test_db_defaults_to_the_user_data_folder(corpus: Path, tmp_path: Path) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path / "data")}
    run_json("index", str(corpus), "--workers", "0", env=env)
    assert (tmp_path / "data" / "quire" / "index" / "index.db").is_file()
    assert run_json("status", env=env)["documents"] == 5


@pytest.mark.parametrize("command", sorted(cli.commands))
def test_every_command_has_help_with_an_example(command: str) -> None:
    code, out = run(command, "--help")
    assert code == 0
    assert cli.commands[command].help, command
    assert "Example: quire " in out, command


def test_group_help_lists_every_command() -> None:
    code, out = run("--help")
    assert code == 0 and "Example:" in out
    assert all(name in out for name in cli.commands)


def test_python_dash_m_works(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "app.cli", "status", "--db", str(tmp_path / "none")],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stderr.startswith("error: no index")
    done = subprocess.run([sys.executable, "-m", "app.cli", "--version"], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and "quire" in done.stdout
