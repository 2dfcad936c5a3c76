"""How soon Pause takes effect in the real window (issue 57): a folder of long PDFs and text files is dropped on an
offscreen window, which is paused at ``--at`` of the files, resumed, and paused again further on; for each pause,
the seconds from the Pause action to the run having stopped (the window's state "paused") and how far the progress
bar moved after Pause. Reader processes read the PDFs for seconds each, as a folder of real books and papers does.

    python bench/pause.py [--folders 18] [--pages 500] [--at 0.3,0.6] [--out bench/results/pause.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


def write_folder(root: Path, folders: int, pages: int) -> Path:
    """``folders`` sub-folders, each with a PDF of ``pages`` pages, a Word file and a long text file."""
    import docgen  # here, not at the top: the reader processes started with spawn run this module's top level again

    for i in range(folders):
        sub = root / f"part{i:02d}"
        sub.mkdir(parents=True)
        (sub / f"book{i:02d}.pdf").write_bytes(docgen.build_pdf(docgen.pdf_pages() * (pages // 5), title=f"Book {i}"))
        docgen.make_docx(sub)
        (sub / "notes.txt").write_text(" ".join(f"Note {j} of part {i} is about the river and its beetles."
                                                for j in range(3000)), encoding="utf-8")
    return root


def measure(folder: Path, work: Path, at: list[float]) -> list[dict]:
    """Drop ``folder`` on a window, pause at each fraction of ``at`` (resuming after each but the last)."""
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from app.gui import settings as S
    from app.gui.controller import IndexState
    from app.gui.settings import Settings
    from app.gui.window import MainWindow

    app = QApplication.instance() or QApplication([])
    settings = Settings(QSettings(str(work / "settings.ini"), QSettings.Format.IniFormat))
    settings.set(S.WATCH_NEW, False)
    window = MainWindow(work / "index", settings)
    window.show()
    pauses: list[dict] = []
    targets = list(at)

    def on_progress(p) -> None:
        current = pauses[-1] if pauses and "seconds" not in pauses[-1] else None
        if current is not None:
            current["done_after"] = max(current["done_after"], p.files_done)
        elif targets and p.files_total and p.files_done >= targets[0] * p.files_total:
            targets.pop(0)
            pauses.append({"at": p.files_done, "total": p.files_total, "done_after": p.files_done,
                           "asked": time.monotonic()})
            window.pause_button.click()  # the Pause action as a person takes it

    def on_state(state: str) -> None:
        if state == IndexState.PAUSED.value and pauses and "seconds" not in pauses[-1]:
            pauses[-1]["seconds"] = round(time.monotonic() - pauses[-1].pop("asked"), 3)
            QTimer.singleShot(300, window.pause_button.click if targets else app.quit)  # Resume, or the end

    window.controller.progress.connect(on_progress)
    window.controller.state_changed.connect(on_state)
    QTimer.singleShot(500, lambda: window.add_paths([str(folder)]))
    QTimer.singleShot(600_000, app.quit)
    app.exec()
    window.close()
    return pauses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folders", type=int, default=18)
    parser.add_argument("--pages", type=int, default=500, help="pages of each PDF (a few seconds' reading each)")
    parser.add_argument("--at", default="0.3,0.6", help="fractions of the files read at which Pause is pressed")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "pause.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="quire-bench-") as tmp:
        folder = write_folder(Path(tmp) / "docs", args.folders, args.pages)
        pauses = measure(folder, Path(tmp), [float(x) for x in args.at.split(",")])
    result = {
        "date": time.strftime("%Y-%m-%d"), "cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
        "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                 text=True).stdout.strip(),
        "load_average": round(os.getloadavg()[0], 2), "command": " ".join(sys.argv), "pauses": pauses,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    for p in pauses:
        print(f"paused at {p['at']}/{p['total']} files: stopped after {p.get('seconds', '?')} s, "
              f"progress went on to {p['done_after']}")


if __name__ == "__main__":
    main()
