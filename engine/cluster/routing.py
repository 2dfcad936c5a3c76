"""Which shard a document lives in: a stable hash of its path, so a changed file is re-indexed in the one shard that
holds it, on every machine and in every Python process (``hash()`` is salted per process, BLAKE2b is not)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass


def shard_of(path: str, shards: int) -> int:
    """The shard of the document at ``path`` (made absolute, as the index stores paths) among ``shards``."""
    digest = hashlib.blake2b(os.path.abspath(path).encode("utf-8", "surrogateescape"), digest_size=8).digest()
    return int.from_bytes(digest, "little") % shards


@dataclass(frozen=True)
class Route:
    """Keeps the paths that belong to shard ``shard`` of ``shards``: the filter a shard's indexing run walks with."""

    shard: int
    shards: int

    def __call__(self, path: str) -> bool:
        """Whether ``path`` belongs to this shard."""
        return shard_of(path, self.shards) == self.shard
