"""README stays what a user needs, and true: the test command CI runs, every CLI command, every keyboard shortcut.

Read as text and parsed with ``ast``, so this needs neither Qt nor the engine.
"""

from __future__ import annotations

import ast
import itertools
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
# Measurements belong in docs/benchmarks.md; README keeps a few headline numbers (issue 36, item 3).
MAX_README_BYTES = 7_000


def _commands() -> list[str]:
    """Names of the subcommands app/cli.py declares with ``@cli.command``."""
    names = []
    for node in ast.parse((ROOT / "app" / "cli.py").read_text(encoding="utf-8")).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for deco in node.decorator_list:
            if isinstance(deco, ast.Call) and ast.unparse(deco.func) == "cli.command":
                named = [a.value for a in deco.args if isinstance(a, ast.Constant)]
                names.append(named[0] if named else node.name.replace("_", "-"))
    return names


def _shortcuts() -> list[str]:
    """Key sequences the main window gives its actions: ``action(text, [keys...], slot)`` in app/gui/window.py."""
    keys = []
    for node in ast.walk(ast.parse((ROOT / "app" / "gui" / "window.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "action":
            keys += [k.value for k in node.args[1].elts]
    return keys


def test_readme_is_short() -> None:
    assert len(README.encode("utf-8")) < MAX_README_BYTES


def test_ci_runs_the_readme_test_command_in_tiers_that_run_every_test_once(pytestconfig: pytest.Config) -> None:
    registered = [line.split(":", 1)[0] for line in pytestconfig.getini("markers")]  # pyproject.toml's, and pytest's
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    command = next(line for line in README.splitlines() if "pytest" in line and line.startswith("python3 -m venv"))
    runs = [line for line in ci if " -m pytest -q" in line]
    assert runs[0].startswith(f"{command} -m "), "CI's first test run is not the README's command"
    tiers = [shlex.split(run.split(" -m pytest -q", 1)[1]) for run in runs]
    assert all(len(args) == 2 and args[0] == "-m" for args in tiers), tiers  # a marker expression, nothing else
    for marks in itertools.product((False, True), repeat=len(registered)):
        chosen = [_selects(args[1], dict(zip(registered, marks))) for args in tiers]
        assert chosen.count(True) == 1, (dict(zip(registered, marks)), tiers)


def _selects(expression: str, marks: dict[str, bool]) -> bool:
    """Whether a ``pytest -m`` expression of ``and``, ``or``, ``not`` and marker names selects a test with ``marks``."""
    return bool(eval(compile(expression, "<-m>", "eval"), {"__builtins__": {}}, marks))  # noqa: S307 (our own file)


def test_every_cli_command_is_in_the_readme() -> None:
    commands = _commands()
    assert {"index", "search", "status", "remove", "eval"} <= set(commands)
    for name in commands:
        assert f"`quire {name}" in README, f"README does not show `quire {name}`"


def test_every_window_shortcut_is_in_the_readme() -> None:
    shortcuts = _shortcuts()
    assert "Ctrl+M" in shortcuts
    # the first column of README's keys table, one entry per key or key sequence
    listed = set()
    for line in README.splitlines():
        if line.startswith("| ") and not line.startswith("| keys"):
            first = line.split("|")[1].replace("`", "").strip()
            listed |= {k.strip() for k in re.split(r",\s+(?=\S)|\sor\s|[()]", first)}
    for key in shortcuts:
        assert key in listed, f"README's keys table lists no {key}"
