"""PyInstaller's entry script for the bundled ``quire-app``: the same ``main`` as the pip-installed GUI script."""

import multiprocessing

if __name__ == "__main__":
    # Reader workers are spawned (engine/ingest/pool.py). A frozen app has no Python to spawn, so each worker
    # re-runs this executable; freeze_support() turns that run into the worker instead of a second window.
    multiprocessing.freeze_support()
    from app.gui.main import main

    main()
