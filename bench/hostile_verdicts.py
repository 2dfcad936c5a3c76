"""The hostile run's common parts: `quire` as a user types it, in a subprocess, and the verdict on what it did.

A verdict is one of five outcomes. A traceback is "Traceback" in stderr (the CLI only prints one with --debug,
which no case passes); a crash is a process ended by a signal nobody sent it, or one that ran past its time limit;
a silent failure is a non-zero exit with nothing printed, or an exit 0 with wrong results; undetected damage is a
damaged index on which a command went on without a word. A case that cannot run here (one that needs root or a
mount) is "not run", with the reason.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
QUIRE = [sys.executable, "-m", "app.cli"]
# A command that runs past this is a hang, counted as a crash: the slowest case (a damaged index's rebuild, a
# full index of the kill corpus on a loaded machine) takes a few tens of seconds.
TIMEOUT = 300


class Outcome(str, Enum):
    """What a case came to."""

    OK = "ok"
    TRACEBACK = "traceback"
    SILENT = "silent failure"
    UNDETECTED = "undetected damage"
    CRASH = "crash"
    NOT_RUN = "not run"  # the case cannot run on this machine (no root, no mount): said why, never counted as ok


@dataclass(frozen=True)
class Ran:
    """One command's run: its arguments, exit status (negative: the signal that ended it), output and seconds."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False

    def said(self) -> str:
        """Its last line of stderr (or stdout), for a table's detail column."""
        lines = (self.stderr.strip() or self.stdout.strip()).splitlines()
        return lines[-1][:160] if lines else ""


@dataclass(frozen=True)
class CaseResult:
    """One case of a class: its name, outcome, what it came to in words, and its seconds."""

    klass: str
    case: str
    outcome: Outcome
    detail: str
    seconds: float


def environment(**extra: str) -> dict[str, str]:
    """The environment every command runs in: the checkout's engine first on the path, plus ``extra``."""
    return {**os.environ, "PYTHONPATH": str(REPO), **extra}


def quire(*args: str, env: dict[str, str] | None = None, stdin: str | None = None, timeout: float = TIMEOUT,
          prefix: Sequence[str] = QUIRE, umask: int | None = None) -> Ran:
    """Run ``quire ARGS`` (``prefix`` replaces ``python -m app.cli``) to its end or ``timeout``."""
    started = time.monotonic()
    try:
        done = subprocess.run([*prefix, *args], cwd=REPO, capture_output=True, timeout=timeout, input=stdin,
                              text=True, errors="replace", env=env or environment(),
                              preexec_fn=None if umask is None else lambda: os.umask(umask))
    except subprocess.TimeoutExpired as e:
        return Ran(tuple(args), -9, _text(e.stdout), _text(e.stderr), time.monotonic() - started, timed_out=True)
    return Ran(tuple(args), done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def _text(data: bytes | str | None) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data or ""


def broken(ran: Ran, sent: int | None = None) -> tuple[Outcome, str] | None:
    """The outcome every command is held to whatever it was asked: a crash, a traceback or a silent exit; None when
    it is none of them. ``sent`` is a signal the case sent it, whose end is no crash."""
    if ran.timed_out:
        return Outcome.CRASH, f"`{_shown(ran)}` ran past {TIMEOUT} s"
    if ran.returncode < 0 and -ran.returncode != sent:
        return Outcome.CRASH, f"`{_shown(ran)}` ended by signal {-ran.returncode}"
    if "Traceback" in ran.stderr:
        return Outcome.TRACEBACK, f"`{_shown(ran)}`: {ran.said()}"
    if ran.returncode > 0 and not ran.stdout.strip() and not ran.stderr.strip():
        return Outcome.SILENT, f"`{_shown(ran)}` exited {ran.returncode} with nothing printed"
    return None


def _shown(ran: Ran) -> str:
    words = " ".join(a if len(a) < 40 else a[:37] + "..." for a in ran.args)
    return f"quire {words}"[:120]


def judge(runs: Sequence[Ran], wrong: str | None, ok: str, *, wrong_is: Outcome = Outcome.SILENT,
          sent: int | None = None) -> tuple[Outcome, str]:
    """The verdict on a case that ran ``runs``: the first broken run's, else ``wrong_is`` if the case found its
    results ``wrong`` (a sentence saying how), else ok with ``ok`` as its detail."""
    for ran in runs:
        found = broken(ran, sent)
        if found:
            return found
    if wrong:
        return wrong_is, wrong
    return Outcome.OK, ok


@contextmanager
def timed(klass: str, case: str, into: list[CaseResult]) -> Iterator[Callable[[tuple[Outcome, str]], None]]:
    """Time a case; the callable it gives records the case's verdict in ``into`` (a case that raises is recorded as
    a crash of the bench's own, with the error, so that one broken case never hides the others)."""
    started = time.monotonic()
    verdicts: list[tuple[Outcome, str]] = []
    try:
        yield verdicts.append
    except Exception as e:  # noqa: BLE001  (a case's own failure is a result, never the end of the run)
        verdicts.append((Outcome.CRASH, f"the case itself failed: {type(e).__name__}: {e}"[:200]))
    outcome, detail = verdicts[-1] if verdicts else (Outcome.CRASH, "no verdict recorded")
    into.append(CaseResult(klass, case, outcome, detail, round(time.monotonic() - started, 1)))
