"""The CLI without the app extra (issue 36): PySide6 and watchdog are the window's, installed by ``quire[app]``.

Checked in a fresh interpreter where both are marked absent, as on a machine that installed plain ``quire``.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from conftest import run_probe

_PROBE = textwrap.dedent(
    """
    import contextlib, io, json, sys

    # what an absent package looks like to both `import` (ImportError) and importlib.util.find_spec (None)
    sys.modules.update({"PySide6": None, "watchdog": None})
    folder, db = sys.argv[1], sys.argv[2]

    from app.cli import cli
    from app.gui.main import main as app_main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for args in (["index", folder, "--db", db], ["search", "blue supergiant star in Orion", "--db", db, "--json"]):
            cli.main(args, standalone_mode=False)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = app_main([])
    print(json.dumps({"cli": out.getvalue(), "app_code": code, "app_err": err.getvalue(),
                      "loaded": sorted(m for m, v in sys.modules.items() if v is not None and m.split(".")[0] in ("PySide6", "watchdog"))}))
    """
)


def test_the_cli_indexes_and_searches_without_qt_and_the_app_names_its_extra(corpus: Path, tmp_path: Path) -> None:
    out = run_probe(_PROBE, corpus, tmp_path / "index")
    assert out["loaded"] == []
    assert "rigel.txt" in out["cli"]
    assert out["app_code"] == 1
    assert out["app_err"].strip() == ("quire-app needs PySide6 and watchdog, which come with the app extra: "
                                      "pip install 'quire[app]'")
