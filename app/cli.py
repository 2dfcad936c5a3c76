"""The ``quire`` command line: a thin layer over :class:`engine.Index` (open the index, call one method, print).

Output is human-readable on a terminal and JSON with ``--json``; errors are one line on stderr (a traceback only
with ``--debug``); Ctrl-C exits with status 130 after saving what was indexed.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TypeGuard

import click

from app.dates import moment
from app.output import end_output, stdout_closed
from engine import (
    FULL_CHECK_BYTES,
    Answer,
    FileState,
    Filters,
    IndexConfig,
    Limits,
    Mode,
    QueryError,
    QuireError,
    default_index_dir,
    named,
    page_label,
    readable,
)

if TYPE_CHECKING:
    from engine import Progress, Searchable

# The index and the models are imported by the commands that use them, not here: reader processes are spawned, and a
# spawned process imports the module that started its parent (this one, for `quire index`) before it reads a file
# (docs/decisions/0008-reader-pool-sizes.md); so does every `quire --help`.

EPILOG_INDEX = "Example: quire index ~/Documents/papers --json"


def _db_option(f):
    return click.option(
        "--db", "db", type=click.Path(file_okay=False, path_type=Path), default=None,
        help=f"index folder (default: {default_index_dir()})",
    )(f)


def _cluster_option(f):
    return click.option(
        "--cluster", metavar="ADDRESS", default=None,
        help="a sharded collection's work on the Ray cluster at ADDRESS (host:port of `ray start --head`), or "
             "'local' for one on this machine; without it, shards are worked on in this process",
    )(f)


def _is_collection(db: Path | None) -> TypeGuard[Path]:
    """Whether ``db`` holds a sharded collection's manifest (engine.cluster) rather than one index."""
    from engine import is_collection

    return is_collection(db)


def _open(db: Path | None, cluster: str | None) -> Searchable:
    """The index at ``db``, or the sharded collection there (engine.cluster) when it holds a manifest."""
    if cluster is not None and not _is_collection(db):
        raise click.UsageError("--cluster works on a sharded collection (made with `quire index --shards N`)")
    from engine import open_index

    return open_index(db, cluster=cluster)


def _json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="print JSON instead of text")(f)


def _handle_errors(f):
    """Engine errors become one readable line and exit status 1; Ctrl-C becomes status 130; a standard output closed
    by its reader (``| head -1``) ends the output with status 0 (app.output)."""

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        debug = click.get_current_context().find_root().params.get("debug", False)
        try:
            return f(*args, **kwargs)
        except BrokenPipeError:
            if not stdout_closed():
                raise
            end_output()
            sys.exit(0)
        except KeyboardInterrupt:
            click.echo("\ninterrupted; everything indexed so far is saved", err=True)
            sys.exit(130)
        except QuireError as e:
            if debug:
                raise
            click.echo(f"error: {e}", err=True)
            sys.exit(1)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise  # click's own: a usage error, --help
        except (Exception, SystemExit) as e:  # a bug, or something that exited inside a library: never silent
            if debug or (isinstance(e, SystemExit) and e.code in (0, None)):
                raise
            click.echo(f"error: {_unexpected(e)} (a bug in quire: run it again with --debug for the details, and "
                       f"report them)", err=True)
            sys.exit(1)

    return wrapper


def _unexpected(error: BaseException) -> str:
    """An error no part of quire expected, in one line."""
    if isinstance(error, SystemExit):
        return f"stopped with exit status {error.code}"
    first = str(error).strip().splitlines()
    return f"{type(error).__name__}: {first[0][:200]}" if first else type(error).__name__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="show tracebacks and debug logging")
@click.version_option(package_name="quire", prog_name="quire")
def cli(debug: bool) -> None:
    """quire: search your documents by meaning and by words, offline.

    Example: quire index ~/Documents && quire search "how do I renew my passport"
    """
    logging.basicConfig(level=logging.DEBUG if debug else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")


class _ProgressLine:
    """A one-line progress display on stderr, redrawn at most ten times a second."""

    def __init__(self) -> None:
        self._last = 0.0

    def __call__(self, p: Progress) -> None:
        now = time.monotonic()
        if p.phase not in ("done",) and now - self._last < 0.1:
            return
        self._last = now
        width = max(10, min(30, shutil.get_terminal_size().columns - 60))
        filled = int(width * p.files_done / p.files_total) if p.files_total else 0
        eta = f" · ETA {_duration(p.eta_seconds)}" if p.eta_seconds else ""
        line = (f"\r{p.phase:<9} [{'#' * filled}{'.' * (width - filled)}] {p.files_done:,}/{p.files_total:,} {p.unit}"
                f" · {p.sentences:,} sentences{eta}")
        click.echo(line.ljust(shutil.get_terminal_size().columns - 1)[: shutil.get_terminal_size().columns - 1],
                   err=True, nl=p.phase == "done")


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def _paths(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[Path, ...]:
    """PATH arguments as paths; an empty one is a typing mistake (as a path it would mean the current folder)."""
    if any(not value for value in values):
        raise click.BadParameter("a path is empty; give a file or folder", ctx=ctx, param=param)
    return tuple(Path(value) for value in values)


class _Megabytes(click.ParamType):
    """A size in MB: a finite number above 0."""

    name = "MB"

    def convert(self, value: str | float, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            size = float(value)
        except ValueError:
            self.fail(f"{value!r} is not a number of MB", param, ctx)
        if not math.isfinite(size) or size <= 0:
            self.fail(f"{value} is not a size: give a number of MB above 0", param, ctx)
        return size


@cli.command(epilog=EPILOG_INDEX)
@click.argument("paths", nargs=-1, type=click.Path(), callback=_paths)
@_db_option
@click.option("--method", default=None, help="embedding method: static (default), sbert, neural")
@click.option("--ignore", multiple=True, help="gitignore-style pattern to skip (repeatable)")
@click.option("--max-size", type=_Megabytes(), default=Limits().max_file_bytes / 1e6, show_default=True,
              help="skip files larger than this many MB")
@click.option("--workers", type=click.IntRange(min=0), default=None,
              help="reader processes (default: cores - 1, none for under 4 MB of plain text; 0 = none)")
@click.option("--ocr-lang", "ocr_lang", multiple=True, metavar="LANG",
              help="Tesseract language of scanned pages and images, e.g. deu or eng+deu (repeatable; default: "
                   "English and every language installed)")
@click.option("--batch", type=click.IntRange(min=1), default=IndexConfig.batch_sentences, show_default=True,
              help="sentences embedded and committed per transaction (lower it to save memory)")
@click.option("--shards", type=click.IntRange(min=1), default=None,
              help="make --db a collection of N shards, each an index of the files its path hash routes to")
@click.option("--rebuild", is_flag=True,
              help="make a damaged index again: delete it and index the folders it held (or the PATHs given)")
@_cluster_option
@_json_option
@_handle_errors
def index(paths: tuple[Path, ...], db: Path | None, method: str | None, ignore: tuple[str, ...], max_size: float,
          workers: int | None, ocr_lang: tuple[str, ...], batch: int, shards: int | None, rebuild: bool,
          cluster: str | None, as_json: bool) -> None:
    """Index files and folders (re-reading only what changed); with no PATH, refresh every folder indexed before."""
    languages = tuple(lang for value in ocr_lang for lang in value.split("+") if lang)
    config = IndexConfig(limits=Limits(max_file_bytes=int(max_size * 1e6), ocr_languages=languages), ignore=ignore,
                         workers=workers, batch_sentences=batch)
    progress = _ProgressLine() if not as_json and sys.stderr.isatty() else None
    if rebuild and (shards is not None or _is_collection(db)):
        raise click.UsageError("--rebuild makes one index again; rebuild a collection's damaged shard by its folder")
    if shards is not None or _is_collection(db):
        from engine import index_collection

        if db is None:
            raise click.UsageError("a sharded collection needs its own folder: give --db DIR")
        report = index_collection(db, list(paths), shards, method=method, config=config, cluster=cluster)
    elif cluster is not None:
        raise click.UsageError("--cluster indexes a sharded collection: give --shards N as well")
    elif rebuild:
        from engine import Index

        report = Index.rebuild(db, list(paths), method=method, config=config, progress=progress)
    else:
        from engine import Index

        with Index(db, method=method, config=config) as idx:
            report = idx.add(list(paths), method=method, progress=progress)
    if as_json:
        click.echo(json.dumps(report.to_json()))
        return
    click.echo(f"{report.documents:,} documents ({report.sentences:,} sentences) indexed, "
               f"{report.unchanged:,} unchanged, {report.removed:,} removed in {report.seconds:.1f} s "
               f"[{report.method}]")
    for issue in report.issues:
        click.echo(f"  {issue.status}: {readable(issue.path)}: {issue.reason}")


# "\b" keeps click from joining the two examples into one line
class _Moment(click.ParamType):
    """A date or an age on the command line (app.dates), as seconds since the epoch."""

    name = "DATE"

    def convert(self, value: str | float, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float):
            return value
        try:
            return moment(value, time.time())
        except ValueError as e:
            self.fail(str(e), param, ctx)


_MOMENT = _Moment()


@cli.command(epilog='\b\nExample: quire search "effects of sleep on memory" -k 5 --mode hybrid --json\n'
                    "Example: quire search --like ~/papers/sleep.pdf:3 -k 5")
@click.argument("text", required=False)
@_db_option
@click.option("-k", "k", type=int, default=10, show_default=True, help="number of documents")
@click.option("--mode", type=click.Choice([m.value for m in Mode]), default=None,
              help="ranking: hybrid (default), semantic (the default with --like) or lexical")
@click.option("--method", default=None, help="must match the index's method (a mismatch is an error)")
@click.option("--queries", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help='batch mode: a JSONL file of {"id", "text"}, answered line by line as it is read (a pipe works); prints '
                   'one {"id", "results"} line per query')
@click.option("--like", "like", metavar="FILE[:PAGE|#SENTENCE]",
              help="other documents like an indexed file, one page of it (from 1), or one sentence of it (the "
                   "`ordinal` that --json prints, from 0); the file itself is left out")
@click.option("--all", "include_weak", is_flag=True,
              help="also list the documents that share nothing with the query, not only the related ones")
@click.option("--exact", is_flag=True, help="search the query as typed, not its spelling correction")
@click.option("--explain/--no-explain", default=True, show_default=True,
              help="facet explanations and context per result; --no-explain gives the same ranking faster (benchmarks)")
@click.option("--rerank-facets/--no-rerank-facets", default=None,
              help="re-order the top results by how well their facets match the query's (default: the engine's, "
                   "off: docs/decisions/0047-facet-reranking-off.md)")
@click.option("--in", "folders", multiple=True, type=click.Path(path_type=Path),
              help="only documents in this folder (repeatable)")
@click.option("--type", "types", multiple=True, metavar="EXT", help="only files of this type: pdf, md, html... (repeatable)")
@click.option("--since", "since", type=_MOMENT, help="only files modified since: 2024-05-01, or an age: 7d, 2w, 6m, 1y")
@click.option("--before", "before", type=_MOMENT, help="only files last modified before this date or age")
@_cluster_option
@_json_option
@_handle_errors
def search(text: str | None, db: Path | None, k: int, mode: str | None, method: str | None, queries: Path | None,
           like: str | None, include_weak: bool, exact: bool, explain: bool, rerank_facets: bool | None,
           folders: tuple[Path, ...], types: tuple[str, ...], since: float | None, before: float | None,
           cluster: str | None, as_json: bool) -> None:
    """Search the index by meaning and by words, or (--like) for documents like one you have."""
    if sum(given is not None for given in (text, queries, like)) != 1:
        raise click.UsageError("give one of TEXT, --queries FILE or --like FILE")
    within = Filters(folders=tuple(str(f.resolve()) for f in folders),
                     types=tuple(t.strip().lstrip(".") for t in types if t.strip()),
                     modified_after=since, modified_before=before)
    # --like's query is a document's sentences, not words a person chose: ranked by meaning unless told otherwise
    mode = mode or (Mode.SEMANTIC if like is not None else Mode.HYBRID).value
    from engine import freeze_long_lived, keep_freed_memory

    keep_freed_memory()  # this process searches: a query's large arrays reuse the last one's memory (0021)
    with _open(db, cluster) as idx:
        if queries is not None:
            unreadable = 0
            for line in _read_queries(queries):
                if line.error is not None:  # a line that is no query: said in its place, and at the end
                    unreadable += 1
                    click.echo(json.dumps({"id": None, "line": line.number, "error": line.error, "results": []}))
                    continue
                try:
                    out = idx.search(line.text, k=k, mode=mode, method=method, include_weak=include_weak,
                                     explain=explain, rerank_facets=rerank_facets, within=within,
                                     correct=not exact).to_json()
                except QueryError as e:
                    # one unusable query must not cost the answers to the others
                    click.echo(json.dumps({"id": line.id, "error": str(e), "results": []}))
                    continue
                freeze_long_lived()  # and keeps searching: what it holds out of full collections (0022, 0025)
                click.echo(json.dumps({"id": line.id, **{key: out[key] for key in (
                    "results", "answer", "confidence", "nothing_relevant", "corrected_from")}}))
            if unreadable:
                raise QuireError(f"{unreadable:,} line{'s' if unreadable > 1 else ''} of {readable(str(queries))} "
                                 f"could not be read as queries (see their \"error\" lines); the others were answered")
            return
        if like is not None:
            from engine import LikeSource

            response = idx.search_like(LikeSource.parse(like), k=k, mode=mode, method=method,
                                       include_weak=include_weak, explain=explain, rerank_facets=rerank_facets,
                                       within=within)
        else:
            assert text is not None  # one of TEXT, --queries and --like, checked above
            response = idx.search(text, k=k, mode=mode, method=method, include_weak=include_weak, explain=explain,
                                  rerank_facets=rerank_facets, within=within, correct=not exact)
    if as_json:
        click.echo(json.dumps(response.to_json()))
        return
    _print_response(response)


# The longest line of a --queries file read as a query: a query is a few words (the engine refuses one past
# MAX_QUERY_CHARS), so a longer line is no query, and reading it whole could take all memory (/dev/zero).
MAX_QUERY_LINE_BYTES = 1 << 20
_SKIP_CHUNK = 1 << 16


@dataclass(frozen=True)
class _QueryLine:
    """One line of a --queries file: its number, and its query's id and text, or why it holds none."""

    number: int
    id: object = None
    text: str = ""
    error: str | None = None


def _read_queries(path: Path) -> Iterator[_QueryLine]:
    """The {"id", "text"} objects of a JSONL query file, each as soon as its line is read (a FIFO is answered line
    by line), in memory that does not grow with the file; blank lines are passed over."""
    with path.open("rb") as f:
        number = 0
        while True:
            raw = f.readline(MAX_QUERY_LINE_BYTES + 1)
            if not raw:
                return
            number += 1
            if len(raw) > MAX_QUERY_LINE_BYTES and not raw.endswith(b"\n"):
                yield _QueryLine(number, error=f"line {number} is longer than {MAX_QUERY_LINE_BYTES >> 20} MB")
                _skip_line(f)  # after its error is out: the line may never end (/dev/zero)
            elif raw.strip():
                yield _query_line(number, raw)


def _skip_line(f: BinaryIO) -> None:
    """Read past the rest of a line, a chunk at a time."""
    while (chunk := f.readline(_SKIP_CHUNK)) and not chunk.endswith(b"\n"):
        pass


def _query_line(number: int, raw: bytes) -> _QueryLine:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return _QueryLine(number, error=f"line {number} is not UTF-8 text: it holds the byte "
                                        f"{raw[e.start:e.start + 1]!r} (save the file as UTF-8)")
    try:
        item = json.loads(text)
    except RecursionError:
        return _QueryLine(number, error=f"line {number} is not JSON (it nests too deeply)")
    except ValueError as e:
        return _QueryLine(number, error=f"line {number} is not JSON ({e})")
    if not isinstance(item, dict) or "id" not in item or not isinstance(item.get("text"), str):
        return _QueryLine(number, error=f'line {number}: expected an object with "id" and "text"')
    return _QueryLine(number, item["id"], item["text"])


def _print_response(response) -> None:
    if response.corrected_from is not None:
        click.echo(f"showing results for “{response.query}”; search instead for “{response.corrected_from}” with "
                   f"--exact")
    if not response.results:
        hidden = f" ({response.weak_hidden} unrelated documents hidden; --all lists them)" if response.weak_hidden else ""
        click.echo(f"nothing relevant found{hidden}")
    elif response.answer is Answer.CLOSEST:
        click.echo(f"no strong match for “{_short(response.query)}”; the closest passages:")
    for i, r in enumerate(response.results, 1):
        page = f", {page_label(r.path, r.page)}" if r.page else ""
        sim = f"{r.score:.0f}% {r.strength.value}" + (
            f", similarity {r.similarity:.2f}" if r.similarity is not None else "")
        words = named(r.explanation.matched_terms)
        path = readable(r.path)
        click.echo(click.style(f"{i}. {r.title or Path(path).name}", bold=True) + f"  {path}{page}")
        # the query's words the document holds, in the shown sentence (highlighted below it) or in its other passages
        click.echo(f"   {sim}" + (f" · {r.byline}" if r.byline else "") + (f" · in the document: {words}" if words else ""))
        click.echo(f"   {_highlight(r.sentence, r.highlights)}")
    if response.missing:
        click.echo(f"not in any document: {', '.join(response.missing)}")
    if response.did_you_mean:
        click.echo(f"did you mean: {response.did_you_mean}")
    for note in response.notes:
        click.echo(f"note: {note}", err=True)


def _short(query: str, most: int = 60) -> str:
    """A query as a line quotes it: on one line, and cut with an ellipsis where it is long (--like's query is a
    document's text)."""
    flat = " ".join(query.split())
    return flat if len(flat) <= most else flat[: most - 1].rstrip() + "…"


def _highlight(text: str, highlights) -> str:
    out, last = [], 0
    for h in sorted(highlights, key=lambda h: h.start):
        out += [text[last : h.start], click.style(text[h.start : h.end], bold=True, fg="yellow")]
        last = h.end
    return "".join(out) + text[last:]


@cli.command(epilog="Example: quire status --json")
@_db_option
@click.option("--files", is_flag=True, help="list every file, not only skipped and failed ones")
@click.option("--check", is_flag=True,
              help=f"read every page of the index for damage (done anyway on an index of at most "
                   f"{FULL_CHECK_BYTES >> 20} MB)")
@_cluster_option
@_json_option
@_handle_errors
def status(db: Path | None, files: bool, check: bool, cluster: str | None, as_json: bool) -> None:
    """Show what the index holds, and every file that was skipped or failed, with the reason."""
    with _open(db, cluster) as idx:
        st = idx.status(files=True, check=check)
    if as_json:
        click.echo(json.dumps(st.to_json()))
        return
    click.echo(f"index {readable(st.folder)} [{st.method}]")
    click.echo(f"{st.indexed:,} indexed, {st.skipped:,} skipped, {st.failed:,} failed; {st.sentences:,} sentences; "
               f"{st.bytes_on_disk / 1e6:.1f} MB")
    for root in st.roots:
        click.echo(f"  root: {readable(root)}")
    for f in st.files:
        if files or f.status != FileState.INDEXED:
            reason = f": {f.reason}" if f.reason else ""
            click.echo(f"  {f.status:<8} {readable(f.path)}{reason}")


@cli.command(epilog="Example: quire remove ~/Documents/old")
@click.argument("paths", nargs=-1, required=True, type=click.Path(), callback=_paths)
@_db_option
@_json_option
@_handle_errors
def remove(paths: tuple[Path, ...], db: Path | None, as_json: bool) -> None:
    """Remove files, or everything under folders, from the index."""
    if _is_collection(db):
        from engine import remove_from_collection

        n = remove_from_collection(db, list(paths))
    else:
        from engine import Index

        with Index(db, create=False) as idx:
            n = idx.remove(list(paths))
    click.echo(json.dumps({"removed": n}) if as_json else f"{n:,} files removed")


@cli.command(epilog="Example: quire embed --method static --input sentences.txt --output vectors.npy")
@click.option("--method", default="static", show_default=True, help="embedding method")
@click.option("--input", "input_path", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="UTF-8 text, one text per line")
@click.option("--output", "output_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help=".npy file of float32 L2-normalised rows, one per input line")
@_handle_errors
def embed(method: str, input_path: Path, output_path: Path) -> None:
    """Embed texts with any method (for benchmarks and other tools)."""
    import numpy as np

    from engine import encode_collection, load_embedder

    lines = input_path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    vectors = encode_collection(load_embedder(method), lines)
    np.save(output_path, vectors.astype(np.float32))
    click.echo(f"{vectors.shape[0]:,} x {vectors.shape[1]} vectors written to {output_path}", err=True)


@cli.command("eval", epilog="Example: quire eval --quick --methods static --baselines bm25")
@click.option("--data", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="benchmark folder with sts/, evalrank/, retrieval/<collection>/ (default: $QUIRE_BENCH_DATA or "
                   "../shared/data/benchmarks)")
@click.option("--methods", default=None, help="comma-separated embedding methods (default: every method; '' for none)")
@click.option("--baselines", default="bm25,model2vec", show_default=True, help="comma-separated baselines, '' for none")
@click.option("--collections", default=None, help="comma-separated retrieval collections (default: all; '' for none)")
@click.option("--quick", is_flag=True, help="subsample every benchmark (a CI smoke test, not for quoting)")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="results folder (default: bench/results of the checkout)")
@click.option("--timeout", type=float, default=3600, show_default=True, help="seconds allowed per quire subprocess")
@click.option("--budget-minutes", type=float, default=60, show_default=True,
              help="time each method may spend; parts its measured speed says would overrun are skipped and reported "
                   "(0: no limit)")
@_json_option
@_handle_errors
def eval_(data: Path | None, methods: str | None, baselines: str, collections: str | None, quick: bool,
          out: Path | None, timeout: float, budget_minutes: float, as_json: bool) -> None:
    """Benchmark every method: STS-B, EvalRank, retrieval through the product, speed; writes latest.json/.md."""
    from engine import evaluate

    results, json_path, md_path = evaluate(
        data=data, methods=None if methods is None else [m for m in methods.split(",") if m], quick=quick,
        baselines=[b for b in baselines.split(",") if b],
        collections=None if collections is None else [c for c in collections.split(",") if c], timeout=timeout,
        budget=budget_minutes * 60 if budget_minutes > 0 else None, out=out,
        say=lambda line: click.echo(line, err=True))
    click.echo(json.dumps(results) if as_json else md_path.read_text(encoding="utf-8"))
    click.echo(f"written: {json_path}, {md_path}", err=True)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="quire")


if __name__ == "__main__":
    main()
