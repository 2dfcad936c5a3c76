"""What an index records of its embedding methods in its ``meta`` table: the method searches use and its
fingerprint, and each method's own fingerprint, centre and calibration."""

from __future__ import annotations

import logging

import numpy as np

from engine import embed
from engine.embed import context
from engine.embed.base import Embedder
from engine.embed.centre import CentredEmbedder, centre_rows, collection_mean, wants_centring
from engine.errors import MethodMismatchError
from engine.search.calibration import Calibration, calibrate, prior
from engine.search.statistics import CollectionStatistics
from engine.store.database import Store
from engine.store.meta import Key, PerMethod
from engine.store.vectors import VectorIndex

log = logging.getLogger(__name__)

# Recalibrate the "nothing relevant" threshold when the index grew or shrank by this share since last time.
RECALIBRATE_CHANGE = 0.1


class Methods:
    """The embedding methods of one index, as its store records them."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @property
    def current(self) -> str:
        """The embedding method searches use."""
        return str(self.store.meta.get(Key.METHOD))

    def state(self) -> tuple:
        """What a loaded graph depends on: the generation of the sentences, the method and its fingerprint."""
        return tuple(self.store.meta.get(key) for key in (Key.GENERATION, Key.METHOD, Key.FINGERPRINT))

    def record(self, embedder: Embedder) -> None:
        """Make ``embedder``'s method the one searches use (in the caller's transaction)."""
        fingerprint = context.fingerprint(embedder)
        self.store.meta.put(Key.METHOD, embedder.name)
        self.store.meta.put(Key.FINGERPRINT, fingerprint)
        self.store.meta.put(Key.DIM, embedder.dim)
        self.store.meta.put(PerMethod.FINGERPRINT.of(embedder.name), fingerprint)

    def embedder(self, method: str | None = None) -> Embedder:
        """The embedder of ``method`` (default: the current one), centred on this index's centre where it has one."""
        embedder = embed.load(method or self.current)
        mean = self.store.meta.get(PerMethod.CENTRE.of(embedder.name)) if wants_centring(embedder) else None
        return embedder if mean is None else CentredEmbedder(embedder, np.asarray(mean, dtype=np.float32))

    def centre_first_batch(self, embedder: Embedder, vectors: np.ndarray) -> tuple[Embedder, np.ndarray]:
        """For a method whose vectors are centred on their collection (engine.embed.centre), fix this index's centre
        from the first batch it embeds and centre that batch; the embedder returned centres the batches after it."""
        if not wants_centring(embedder) or isinstance(embedder, CentredEmbedder) or not len(vectors):
            return embedder, vectors
        stored = self.store.meta.get(PerMethod.CENTRE.of(embedder.name))
        if stored is not None:  # fixed since this embedder was loaded (a re-embedding before the run): keep it
            mean = np.asarray(stored, dtype=np.float32)
        else:
            mean = collection_mean(vectors)
            with self.store.transaction():
                self.store.meta.put(PerMethod.CENTRE.of(embedder.name), mean.tolist())
        return CentredEmbedder(embedder, mean), centre_rows(vectors, mean)

    def is_current(self, embedder: Embedder) -> bool:
        """Whether the index's vectors were made as ``embedder`` makes them."""
        return context.fingerprint(embedder) == self.store.meta.get(Key.FINGERPRINT)

    def check_current(self, embedder: Embedder) -> None:
        """Raise MethodMismatchError unless the index's vectors were made as ``embedder`` makes them."""
        if not self.is_current(embedder):
            raise MethodMismatchError(
                f"the index's {self.current} vectors were made by another version of the model or of quire "
                f"({self.store.meta.get(Key.FINGERPRINT)}, this one makes {context.fingerprint(embedder)}); "
                f"run `quire index --method {self.current}` to re-embed"
            )

    def made_by(self, embedder: Embedder) -> bool:
        """Whether the vectors stored for ``embedder``'s method were made as it makes them (false: they are of an
        older model version, or made under another rule, and useless)."""
        return context.fingerprint(embedder) == self.store.meta.get(PerMethod.FINGERPRINT.of(embedder.name))

    def start_over(self, embedder: Embedder) -> None:
        """Forget the vectors, centre and fingerprint of ``embedder``'s method and record its fingerprint."""
        self.store.vectors.drop(embedder.name)
        with self.store.transaction():
            self.store.meta.put(PerMethod.FINGERPRINT.of(embedder.name), context.fingerprint(embedder))
            self.store.meta.put(PerMethod.CENTRE.of(embedder.name), None)  # the next first batch sets it again

    def calibrate(self, embedder: Embedder, graph: VectorIndex, *, force: bool = False) -> None:
        """Measure the random-pair cosine distribution of ``embedder``'s vectors again when the index has changed by
        RECALIBRATE_CHANGE since the last time (or with ``force``); ``graph`` is the method's, whose vectors are read
        when it is open (the static ones would otherwise be computed again from the text)."""
        count = self.store.sentences.count()
        key = PerMethod.CALIBRATION.of(embedder.name)
        previous = self.store.meta.get(key)
        last = previous.get("sentences", 0) if previous else 0
        if not force and previous and abs(count - last) <= RECALIBRATE_CHANGE * max(last, 1):
            return
        cal = calibrate(self.store, embedder.name, read=graph.vectors if graph.is_open else None)
        with self.store.transaction():
            self.store.meta.put(key, {**cal.to_meta(), "sentences": count} if cal else None)

    def calibration(self, embedder: Embedder, collection: CollectionStatistics | None) -> Calibration | None:
        """The query scale's: a shard's collection's (its own sample is a part of it), the index's, or the prior."""
        if collection is not None:
            return collection.calibration
        stored = self.store.meta.get(PerMethod.CALIBRATION.of(embedder.name))
        own = Calibration.from_meta({k: v for k, v in stored.items() if k != "sentences"} if stored else None)
        return own if own is not None else prior(context.fingerprint(embedder))

    def embedded(self) -> tuple[str, ...]:
        """Methods with stored vectors, and the derived methods the index was embedded with (their vectors are
        computed from the text)."""
        stored = [t[len("vectors_"):] for t in self.store.vectors.tables()]
        derived = [m for m in embed.derived() if self.store.meta.get(PerMethod.FINGERPRINT.of(m)) is not None]
        return tuple(sorted({*stored, *derived}))
