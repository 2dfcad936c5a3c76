"""A collection split into shards, each an ordinary quire index, searched and indexed together (issue 37).

Sits above :mod:`engine.index` (it opens each shard as an :class:`engine.Index`); nothing below imports it, and only
:mod:`engine.cluster.remote` imports ray, so the single-machine path never loads it.
"""
