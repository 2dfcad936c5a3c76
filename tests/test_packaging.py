"""Packaging stays consistent without building a bundle: entry points, the menu entry, the spec's inputs, the
icon formats and the Linux installer. (The bundle itself is built and smoke-tested by packaging/build.sh and
packaging/smoke.sh, minutes of work that the test suite does not repeat.)"""

from __future__ import annotations

import ast
import configparser
import importlib.util
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"


def _load_icons():
    """packaging/icons.py, loaded by path: packaging/ is not a package and its names should not shadow others."""
    spec = importlib.util.spec_from_file_location("quire_packaging_icons", PACKAGING / "icons.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


icons = _load_icons()

# Main categories of the freedesktop menu specification: a menu entry needs one to be placed in a menu.
MAIN_CATEGORIES = {"AudioVideo", "Audio", "Video", "Development", "Education", "Game", "Graphics", "Network",
                   "Office", "Science", "Settings", "System", "Utility"}


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _desktop_entry() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    parser.optionxform = str  # keys are case-sensitive in desktop files
    parser.read(ROOT / "resources" / "quire.desktop", encoding="utf-8")
    assert parser.sections()[0] == "Desktop Entry"
    return parser["Desktop Entry"]


def _spec_constant(name: str):
    """A literal assigned at the top level of packaging/quire.spec (the spec runs only inside PyInstaller)."""
    tree = ast.parse((PACKAGING / "quire.spec").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"quire.spec assigns no {name}")


def test_pyproject_declares_the_cli_and_the_gui_script():
    project = _pyproject()["project"]
    assert project["scripts"]["quire"] == "app.cli:main"
    assert project["gui-scripts"]["quire-app"] == "app.gui.main:main"
    assert "quire-app" not in project["scripts"]  # a console script would open a terminal window on Windows


def test_a_plain_install_stays_light():
    project = _pyproject()["project"]
    plain = " ".join(project["dependencies"]).lower()
    for heavy in project["optional-dependencies"]["gpu"] + project["optional-dependencies"]["cluster"]:
        assert heavy.split(">")[0].split("=")[0].lower() not in plain


@pytest.mark.parametrize("extra", ["gpu", "cluster"])
def test_the_bundle_excludes_every_gpu_and_cluster_package(extra: str):
    excluded = set(_spec_constant("EXCLUDES"))
    for requirement in _pyproject()["project"]["optional-dependencies"][extra]:
        name = requirement.split(">")[0].split("=")[0].strip().replace("-", "_")
        assert name in excluded, f"{name} ({extra} extra) would be bundled"


def test_the_tests_install_the_cluster_extra():
    """CI installs .[test] from scratch: the Ray tests must find ray there rather than skip."""
    assert "quire[cluster]" in _pyproject()["project"]["optional-dependencies"]["test"]


def test_the_desktop_file_follows_the_freedesktop_spec():
    entry = _desktop_entry()
    assert entry["Type"] == "Application"
    assert entry["Name"]
    # Exec names the GUI script; install-linux.sh replaces it with an absolute path.
    assert entry["Exec"].split()[0] == "quire-app"
    assert entry["Terminal"] == "false"
    assert entry["Icon"] == "quire"  # a theme name, not a path: the installer puts quire.* into hicolor
    categories = entry["Categories"]
    assert categories.endswith(";")
    assert MAIN_CATEGORIES & set(categories.split(";"))
    for key, value in entry.items():
        assert value == value.strip() and value, f"{key} is empty or padded"


def test_the_spec_and_the_scripts_name_files_that_exist():
    for script in ("build.sh", "smoke.sh", "install-linux.sh"):
        assert os.access(PACKAGING / script, os.X_OK), f"packaging/{script} is not executable"
    entry = (PACKAGING / "quire_app.py").read_text(encoding="utf-8")
    assert "freeze_support()" in entry and "from app.gui.main import main" in entry
    for name in ("static/model.npz", "static/neighbours.npz", "quire.desktop", "icons/quire.svg", "icons/quire-64.png", "icons/quire-256.png"):
        assert (ROOT / "resources" / name).is_file(), f"resources/{name} is missing"


def test_ico_wraps_the_png(tmp_path):
    png = ROOT / "resources" / "icons" / "quire-256.png"
    data = icons.write_ico(png, tmp_path / "quire.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    width, height, _, _, planes, bits, size, offset = struct.unpack("<BBBBHHII", data[6:22])
    assert (reserved, kind, count) == (0, 1, 1)
    assert (width, height, planes, bits) == (0, 0, 1, 32)  # 0 means 256 px
    assert data[offset:offset + size] == png.read_bytes()


def test_icns_wraps_the_png(tmp_path):
    png = ROOT / "resources" / "icons" / "quire-256.png"
    data = icons.write_icns(png, tmp_path / "quire.icns").read_bytes()
    assert data[:4] == b"icns" and struct.unpack(">I", data[4:8])[0] == len(data)
    assert data[8:12] == b"ic08" and struct.unpack(">I", data[12:16])[0] == len(data) - 8
    assert data[16:] == png.read_bytes()


def test_icons_refuse_a_png_of_the_wrong_size(tmp_path):
    small = ROOT / "resources" / "icons" / "quire-64.png"
    with pytest.raises(ValueError, match=f"{icons.ICON_PX}x{icons.ICON_PX}"):
        icons.write_ico(small, tmp_path / "quire.ico")


def _fake_bundle(folder: Path) -> Path:
    """A folder laid out like dist/quire, with a shell script standing in for the frozen executable."""
    resources = folder / "_internal" / "resources"
    shutil.copytree(ROOT / "resources" / "icons", resources / "icons")
    shutil.copy(ROOT / "resources" / "quire.desktop", resources)
    app = folder / "quire-app"
    app.write_text("#!/bin/sh\necho quire\n")
    app.chmod(0o755)
    return folder


def _install(home: Path, *args: str, path: str = os.environ["PATH"]) -> subprocess.CompletedProcess:
    env = {"HOME": str(home), "PATH": path}
    return subprocess.run(["bash", str(PACKAGING / "install-linux.sh"), *args], env=env, capture_output=True,
                          text=True, check=True, timeout=60)


def test_install_linux_puts_a_bundle_into_the_menu_and_takes_it_out(tmp_path):
    home = tmp_path / "home"
    _install(home, str(_fake_bundle(tmp_path / "quire")))
    share = home / ".local" / "share"
    installed = home / ".local" / "opt" / "quire" / "quire-app"
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    parser.optionxform = str
    parser.read(share / "applications" / "quire.desktop")
    assert parser["Desktop Entry"]["Exec"] == f'"{installed}"'
    assert subprocess.run([str(home / ".local" / "bin" / "quire-app")], capture_output=True, text=True).stdout == "quire\n"
    for icon in ("scalable/apps/quire.svg", "256x256/apps/quire.png", "64x64/apps/quire.png"):
        assert (share / "icons" / "hicolor" / icon).is_file()

    (share / "quire" / "index").mkdir(parents=True)  # the user's indexes survive an uninstall
    _install(home, "--uninstall")
    assert not (share / "applications" / "quire.desktop").exists()
    assert not installed.exists() and not (home / ".local" / "bin" / "quire-app").exists()
    assert not (share / "icons" / "hicolor" / "scalable" / "apps" / "quire.svg").exists()
    assert (share / "quire" / "index").is_dir()


def test_install_linux_refuses_a_folder_that_is_not_a_bundle(tmp_path):
    with pytest.raises(subprocess.CalledProcessError) as failed:
        _install(tmp_path / "home", str(tmp_path))
    assert "has no quire-app" in failed.value.stderr


def test_install_linux_adds_a_pip_installed_app_to_the_menu(tmp_path):
    scripts = _fake_bundle(tmp_path / "venv-bin")  # stands in for a venv's bin/ holding the gui-script
    _install(tmp_path / "home", "--pip", path=f"{scripts}:{os.environ['PATH']}")
    desktop = (tmp_path / "home" / ".local" / "share" / "applications" / "quire.desktop").read_text()
    assert f'Exec="{scripts / "quire-app"}"' in desktop
    assert not (tmp_path / "home" / ".local" / "opt").exists()
