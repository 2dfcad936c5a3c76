"""Embedding methods by name. Heavy methods are imported only when asked for, so ``static`` never pulls in torch."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from engine.embed.base import Embedder
from engine.errors import ConfigError, MethodUnavailableError
from engine.resources import resource_path

log = logging.getLogger(__name__)

DEFAULT_METHOD = "static"
STATIC_MODEL = "static/model.npz"
STATIC_NEIGHBOURS = "static/neighbours.npz"

_FACTORIES: dict[str, Callable[[dict], Embedder]] = {}
_CACHE: dict[tuple, Embedder] = {}
_DERIVED: set[str] = set()


def register(name: str, factory: Callable[[dict], Embedder], *, derived: bool = False) -> None:
    """Make a method selectable by ``name``; ``factory`` gets the user's options (e.g. a model path). A ``derived``
    method's vectors cost less to make again from the text than to store and read, so indexes do not store them."""
    _FACTORIES[name] = factory
    if derived:
        _DERIVED.add(name)


def derived() -> list[str]:
    """Names of the methods whose vectors indexes compute from the text instead of storing (:func:`register`)."""
    return sorted(_DERIVED)


def names() -> list[str]:
    """Selectable method names, default first."""
    return sorted(_FACTORIES, key=lambda n: (n != DEFAULT_METHOD, n))


def load(name: str, **options) -> Embedder:
    """The embedder called ``name``, loaded once per process and options (models are large; queries are many)."""
    if name not in _FACTORIES:
        raise ConfigError(f"unknown embedding method {name!r}; choose from {', '.join(names())}")
    key = (name, tuple(sorted(options.items())))
    if key not in _CACHE:
        _CACHE[key] = _FACTORIES[name](options)
    return _CACHE[key]


def _static(options: dict) -> Embedder:
    from engine.embed.static import StaticEmbedder

    if options.get("model"):
        return StaticEmbedder.from_file(Path(options["model"]))
    # by their own paths: a zipapp copies each bundled file out on its own
    return StaticEmbedder.from_file(resource_path(STATIC_MODEL), resource_path(STATIC_NEIGHBOURS))


def _sbert(options: dict) -> Embedder:
    try:
        from engine.embed.sbert import SbertEmbedder
    except ImportError as e:
        raise MethodUnavailableError(f"the sbert method needs torch and sentence-transformers: pip install -e '.[gpu]' ({e})") from e
    return SbertEmbedder(options.get("model"))


def _neural(options: dict) -> Embedder:
    try:
        from engine.embed.neural import NeuralEmbedder
    except ImportError as e:
        raise MethodUnavailableError(
            f"the neural method needs torch and transformers: pip install -e '.[gpu]' ({e})") from e
    return NeuralEmbedder(options.get("model"))


# the static model embeds faster than SQLite reads float16 rows: its vectors are computed from the text
# (docs/decisions/0049-static-vectors-from-the-text.md)
register("static", _static, derived=True)
register("sbert", _sbert)
register("neural", _neural)
