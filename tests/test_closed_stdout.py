"""A standard output closed by its reader (``| head -1``, ``| grep -q``) ends the output: the CLI and the app's
start-up probe exit at once with status 0 and no traceback, and an unexpected error in a run nobody watches is
logged and ends the app instead of opening a message box that waits forever (issue 33, item 11).

Real processes with real pipes; every wait has a timeout, so a hang fails the test instead of stalling the run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TIMEOUT = 60  # the CLI and the app finish in seconds here; a hang fails
# Runs app.gui.main like the quire-app entry point; ``--fail`` makes the probe's engine-ready slot raise, as any
# bug in a slot would.
APP = (
    "import sys\n"
    "from app.gui import main as m\n"
    "if '--fail' in sys.argv:\n"
    "    sys.argv.remove('--fail')\n"
    "    m._lag_probe = lambda: (lambda: 1 / 0)\n"
    "sys.exit(m.main(sys.argv[1:]))\n"
)


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    from conftest import indexed_corpus

    return indexed_corpus(tmp_path_factory.mktemp("closed_stdout"))


def _closed_pipe() -> int:
    """The write end of a pipe whose reader has already gone: the first write fails with EPIPE."""
    read, write = os.pipe()
    os.close(read)
    return write


def _run_into(write: int, argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, cwd=REPO, stdout=write, stderr=subprocess.PIPE, text=True, timeout=TIMEOUT,
                              env=env)
    finally:
        os.close(write)


def _app_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    return {**env, "HOME": str(home), "QT_QPA_PLATFORM": "offscreen"}


def test_cli_output_into_a_closed_pipe_ends_quietly(db: Path) -> None:
    done = _run_into(_closed_pipe(), [sys.executable, "-m", "app.cli", "status", "--db", str(db), "--files"])
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr


def test_cli_search_read_by_head_ends_after_the_first_line(db: Path, tmp_path: Path) -> None:
    # `quire search --queries ... | head -1`: the reader takes a line and goes while lines are still coming (their
    # JSON is far larger than a pipe's buffer, so the writer meets the closed pipe)
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps({"id": i, "text": f"blue star number {i}"}) + "\n" for i in range(200)),
                       encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "search", "--queries", str(queries), "--db", str(db)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        first = proc.stdout.readline()
        proc.stdout.close()
        _, err = proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
    assert json.loads(first)["id"] == 0
    assert proc.returncode == 0, err
    assert b"Traceback" not in err and b"BrokenPipeError" not in err, err


def test_startup_probe_into_a_closed_pipe_closes_the_window_and_exits(tmp_path: Path) -> None:
    # packaging/smoke.sh's X11 step: `quire-app --startup-probe | grep -q '^ready '`; the print after grep had gone
    # raised BrokenPipeError, the exception hook opened a modal box and the run waited for ever
    done = _run_into(_closed_pipe(), [sys.executable, "-c", APP, "--startup-probe", "--index", str(tmp_path / "index")],
                     _app_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr


def test_an_unexpected_error_in_a_run_nobody_watches_is_logged_and_ends_the_app(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", APP, "--startup-probe", "--fail", "--index", str(tmp_path / "index")],
                          cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT, env=_app_env(tmp_path))
    assert done.returncode == 70, (done.returncode, done.stderr)  # EXIT_UNEXPECTED, not a box waiting for a click
    assert "unexpected error" in done.stderr and "ZeroDivisionError" in done.stderr, done.stderr
    assert done.stdout.startswith("ready ")


def test_smoke_script_reads_the_probe_to_the_end() -> None:
    script = (REPO / "packaging" / "smoke.sh").read_text(encoding="utf-8")
    probes = [line for line in script.splitlines() if "--startup-probe" in line or "grep" in line and "ready" in line]
    assert probes and not any("grep -q" in line for line in probes), probes
