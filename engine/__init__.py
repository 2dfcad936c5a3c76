"""quire's engine: index folders of documents into SQLite + HNSW and search them by meaning and by words.

No Qt and no CLI toolkit here: the command line (``app.cli``) and the desktop app (``app.gui``) are thin layers over
:class:`Index` and :func:`open_index`, and import only the names below (tests/test_app_seam.py,
docs/decisions/0052-one-seam-to-the-app.md).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.cluster.indexing import index_collection, remove_from_collection
    from engine.cluster.manifest import is_collection
    from engine.cluster.opening import open_index
    from engine.config import IndexConfig
    from engine.embed import DEFAULT_METHOD
    from engine.embed import load as load_embedder
    from engine.embed import names as embedding_methods
    from engine.embed.centre import encode_collection
    from engine.embed.device import detect as detect_device
    from engine.embed.speed import sentences_per_second
    from engine.errors import (
        Cancelled,
        IndexNotFoundError,
        IndexReadOnlyError,
        QueryError,
        QuireError,
        ReadError,
    )
    from engine.eval.harness import evaluate
    from engine.filestate import FileState
    from engine.heap import freeze_long_lived, keep_freed_memory, thaw
    from engine.index import Index
    from engine.indexing.run import Progress
    from engine.ingest.copies import file_holding, is_packed, unpacked_copy
    from engine.ingest.extract import extract
    from engine.ingest.readers.base import Limits
    from engine.ingest.readers.text import decode as decode_text
    from engine.locations import default_index_dir
    from engine.reports import IndexReport, IndexStatus
    from engine.resources import resource_path
    from engine.search.like import LikeSource, query_from_file
    from engine.search.results import Answer, Explanation, Mode, SearchResponse, SearchResult, named
    from engine.searchable import Searchable
    from engine.store.filters import NOTHING_PASSES, Filters
    from engine.store.health import FULL_CHECK_BYTES
    from engine.text.pages import page_label
    from engine.text.paths import readable
    from engine.text.sentences import ends_like_sentence, is_list_item
    from engine.text.terms import query_terms, stem

__version__ = "0.1.0"

# Each public name's home module, loaded on first use (PEP 562): a light module such as engine.text.paths, which the
# window imports before the engine has loaded on its worker thread, must not pull in the whole engine through this
# package, nor may the static path import torch. "module:name" re-exports a name under another one.
_HOMES = {
    "index_collection": "engine.cluster.indexing", "remove_from_collection": "engine.cluster.indexing",
    "is_collection": "engine.cluster.manifest", "open_index": "engine.cluster.opening",
    "IndexConfig": "engine.config",
    "DEFAULT_METHOD": "engine.embed", "load_embedder": "engine.embed:load", "embedding_methods": "engine.embed:names",
    "encode_collection": "engine.embed.centre", "detect_device": "engine.embed.device:detect",
    "sentences_per_second": "engine.embed.speed",
    "Cancelled": "engine.errors", "IndexNotFoundError": "engine.errors", "IndexReadOnlyError": "engine.errors",
    "QueryError": "engine.errors", "QuireError": "engine.errors", "ReadError": "engine.errors",
    "evaluate": "engine.eval.harness",
    "freeze_long_lived": "engine.heap", "keep_freed_memory": "engine.heap", "thaw": "engine.heap",
    "Index": "engine.index", "Progress": "engine.indexing.run",
    "file_holding": "engine.ingest.copies", "is_packed": "engine.ingest.copies", "unpacked_copy": "engine.ingest.copies",
    "extract": "engine.ingest.extract", "Limits": "engine.ingest.readers.base",
    "decode_text": "engine.ingest.readers.text:decode",
    "default_index_dir": "engine.locations",
    "IndexReport": "engine.reports", "IndexStatus": "engine.reports",
    "resource_path": "engine.resources",
    "LikeSource": "engine.search.like", "query_from_file": "engine.search.like",
    "Answer": "engine.search.results", "Explanation": "engine.search.results", "Mode": "engine.search.results",
    "SearchResponse": "engine.search.results", "SearchResult": "engine.search.results", "named": "engine.search.results",
    "Searchable": "engine.searchable",
    "FileState": "engine.filestate",
    "NOTHING_PASSES": "engine.store.filters", "Filters": "engine.store.filters",
    "FULL_CHECK_BYTES": "engine.store.health",
    "page_label": "engine.text.pages", "readable": "engine.text.paths",
    "ends_like_sentence": "engine.text.sentences", "is_list_item": "engine.text.sentences",
    "query_terms": "engine.text.terms", "stem": "engine.text.terms",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    module, _, attribute = _HOMES[name].partition(":")
    return getattr(importlib.import_module(module), attribute or name)


__all__ = [
    "DEFAULT_METHOD",
    "FULL_CHECK_BYTES",
    "NOTHING_PASSES",
    "Answer",
    "Cancelled",
    "Explanation",
    "FileState",
    "Filters",
    "Index",
    "IndexConfig",
    "IndexNotFoundError",
    "IndexReadOnlyError",
    "IndexReport",
    "IndexStatus",
    "Limits",
    "LikeSource",
    "Mode",
    "Progress",
    "QueryError",
    "QuireError",
    "ReadError",
    "SearchResponse",
    "SearchResult",
    "Searchable",
    "__version__",
    "decode_text",
    "default_index_dir",
    "detect_device",
    "embedding_methods",
    "encode_collection",
    "ends_like_sentence",
    "evaluate",
    "extract",
    "file_holding",
    "freeze_long_lived",
    "index_collection",
    "is_collection",
    "is_list_item",
    "is_packed",
    "keep_freed_memory",
    "load_embedder",
    "named",
    "open_index",
    "page_label",
    "query_from_file",
    "query_terms",
    "readable",
    "remove_from_collection",
    "resource_path",
    "sentences_per_second",
    "stem",
    "thaw",
    "unpacked_copy",
]
