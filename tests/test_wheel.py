"""The wheel carries the bundled files and an installed quire finds them without the checkout: built from a copy of
the sources, installed with ``pip install --user`` into a prefix of its own, and run as a zipapp, each time from a
folder outside the checkout with $QUIRE_RESOURCES unset.

Offline: the wheel is built with the setuptools already installed here (no build isolation, no index), the fresh venv
is made without pip, and quire's dependencies come from this interpreter's site-packages through a ``.pth`` file
(they are not what is tested; quire itself is installed from the wheel with ``--no-deps``).
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import zipapp
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# What the build reads: the rest of the checkout (tests, bench, docs) must not be needed.
SOURCES = ("pyproject.toml", "setup.py", "README.md", "engine", "app", "resources")
# Files engine/resources.py hands out that an installed quire needs (the static default, the GPU head, the icons).
PACKAGED = ("static/model.npz", "static/PROVENANCE.json", "static/neighbours.npz", "neural/head.npz", "icons/quire.svg", "quire.desktop")
QUERY = "chief financial officer expects profits"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """quire's wheel, built from a copy of the sources so the build writes nothing into the checkout."""
    pytest.importorskip("setuptools", reason="the wheel is built offline with the installed setuptools")
    root = tmp_path_factory.mktemp("wheel")
    source = root / "src"
    source.mkdir()
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "_resources"))
        else:
            shutil.copy2(REPO / name, source / name)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation", "--no-index",
         "--wheel-dir", str(root / "dist"), "--quiet"],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    (built,) = (root / "dist").glob("quire-*.whl")
    return built


def _clean_env(**extra: str) -> dict[str, str]:
    """This environment without anything that would lead an installed quire back to the checkout."""
    env = {k: v for k, v in os.environ.items() if k not in {"QUIRE_RESOURCES", "PYTHONPATH", "PYTHONNOUSERSITE"}}
    return {**env, **extra}


def _quire(command: list[str], cwd: Path, env: dict[str, str], corpus: Path, db: Path) -> tuple[dict, dict]:
    """``quire index`` then ``quire search`` through ``command`` (the quire entry point), as JSON."""
    runs = []
    for args in (["index", str(corpus), "--db", str(db), "--workers", "0", "--json"],
                 ["search", QUERY, "--db", str(db), "--json"]):
        done = subprocess.run([*command, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout))
    return runs[0], runs[1]


def _where(python: list[str], cwd: Path, env: dict[str, str]) -> dict:
    """Where the engine and its static model were found, asked of ``python``."""
    probe = (
        "import json, engine, engine.resources as r;"
        "print(json.dumps({'engine': engine.__file__, 'model': str(r.resource_path('static/model.npz'))}))"
    )
    done = subprocess.run([*python, "-c", probe], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_wheel_carries_the_bundled_files_inside_the_package(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for name in PACKAGED:
            assert f"engine/_resources/{name}" in names
        assert any(n.startswith("engine/_resources/calibration/") and n.endswith(".json") for n in names)
        assert "engine/_resources/confidence/static.json" in names  # the confidence models a search reads
        model = archive.getinfo("engine/_resources/static/model.npz")
        assert model.file_size == (REPO / "resources" / "static" / "model.npz").stat().st_size
        assert not any(n.startswith(("tests/", "bench/", "resources/")) or "/share/" in n for n in names)


def test_a_user_install_in_another_prefix_indexes_and_searches(wheel, corpus, tmp_path):
    venv, user, outside = tmp_path / "venv", tmp_path / "user", tmp_path / "elsewhere"
    outside.mkdir()
    # A venv with system site-packages lets pip install into the user site, as `pip install --user` does.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True,
                   timeout=120)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    # quire's dependencies (and pip) from this interpreter: listed as plain paths, so that a .pth file there (such
    # as an editable install of quire) is not run.
    ours = [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]
    Path(purelib, "quire_test_dependencies.pth").write_text("\n".join(dict.fromkeys(ours)) + "\n")
    env = _clean_env(PYTHONUSERBASE=str(user), HOME=str(tmp_path / "home"))
    done = subprocess.run([str(python), "-m", "pip", "install", "--user", "--no-deps", "--no-index", "--quiet",
                           str(wheel)], cwd=outside, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr

    where = _where([str(python)], outside, env)
    assert Path(where["engine"]).is_relative_to(user)
    assert Path(where["model"]).is_relative_to(user) and Path(where["model"]).is_file()
    script = user / ("Scripts/quire.exe" if os.name == "nt" else "bin/quire")
    report, found = _quire([str(script)], outside, env, corpus, tmp_path / "db")
    assert report["documents"] == 5 and report["method"] == "static"
    assert found["results"][0]["path"].endswith("budget.txt")


def test_a_zipapp_reads_its_model_out_of_the_zip(wheel, corpus, tmp_path):
    unpacked, outside = tmp_path / "app", tmp_path / "elsewhere"
    outside.mkdir()
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(unpacked)
    (unpacked / "__main__.py").write_text("from app.cli import main\n\nmain()\n")
    pyz = tmp_path / "quire.pyz"
    zipapp.create_archive(unpacked, pyz)
    shutil.rmtree(unpacked)
    env = _clean_env(HOME=str(tmp_path / "home"))

    probe = (
        f"import sys; sys.path.insert(0, {str(pyz)!r});"
        "import json, engine, engine.resources as r; p = r.resource_path('static/model.npz');"
        "print(json.dumps({'engine': engine.__file__, 'model': str(p), 'size': p.stat().st_size}))"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=outside, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    where = json.loads(done.stdout)
    assert where["engine"].startswith(str(pyz))
    assert where["size"] == (REPO / "resources" / "static" / "model.npz").stat().st_size
    assert not Path(where["model"]).is_relative_to(REPO)
    report, found = _quire([sys.executable, str(pyz)], outside, env, corpus, tmp_path / "db")
    assert report["documents"] == 5
    assert found["results"][0]["path"].endswith("budget.txt")
