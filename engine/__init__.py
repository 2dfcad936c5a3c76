"""quire's engine: index folders of documents into SQLite + HNSW and search them by meaning and by words.

No Qt and no CLI toolkit here: the command line (``app.cli``) and the desktop app (``app.gui``) are thin layers over
:class:`Index`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.config import IndexConfig
    from engine.errors import QuireError
    from engine.index import Index
    from engine.indexing.run import Progress
    from engine.reports import IndexReport, IndexStatus
    from engine.search.results import Mode, SearchResponse, SearchResult
    from engine.store.filters import Filters

__version__ = "0.1.0"

# Loaded on first use (PEP 562): a light module such as engine.text.paths, which the window imports before the
# engine has loaded on its worker thread, must not pull in the whole engine through this package.
_HOMES = {
    "IndexConfig": "engine.config", "QuireError": "engine.errors", "Index": "engine.index",
    "IndexReport": "engine.reports", "IndexStatus": "engine.reports", "Progress": "engine.indexing.run",
    "Mode": "engine.search.results", "SearchResponse": "engine.search.results", "SearchResult": "engine.search.results",
    "Filters": "engine.store.filters",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)

__all__ = [
    "Filters",
    "Index",
    "IndexConfig",
    "IndexReport",
    "IndexStatus",
    "Mode",
    "Progress",
    "QuireError",
    "SearchResponse",
    "SearchResult",
    "__version__",
]
