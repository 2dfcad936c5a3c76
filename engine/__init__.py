"""quire's engine: index folders of documents into SQLite + HNSW and search them by meaning and by words.

No Qt and no CLI toolkit here: the command line (``app.cli``) and the desktop app (``app.gui``) are thin layers over
:class:`Index`.
"""

from __future__ import annotations

from engine.config import IndexConfig
from engine.errors import QuireError
from engine.index import Index, IndexReport, IndexStatus, Progress
from engine.search.results import Mode, SearchResponse, SearchResult

__version__ = "0.1.0"

__all__ = [
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
