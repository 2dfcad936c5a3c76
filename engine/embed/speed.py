"""How fast a method embeds on this machine, measured rather than assumed: the settings dialog turns it into the time
a collection would take, so a slow method on a CPU is a choice made knowing its cost (issue 34)."""

from __future__ import annotations

import time

from engine.embed import load

# Sentences of everyday length (10-30 words), as documents hold them; a fixed sample so that rates compare.
SAMPLE = (
    "The committee approved the harbour budget after a long debate about the new lighthouse.",
    "Patients can book appointments online, and the clinic confirms each one by text message.",
    "Beavers build dams of branches and mud across slow streams, flooding the land behind them.",
    "To edit a file in place with sed, pass the -i option followed by the expression.",
    "The treaty ended three decades of war between the two kingdoms and fixed the border on the river.",
    "Quarterly revenue rose by four percent, mostly from subscriptions in the northern region.",
    "Photosynthesis converts light, water and carbon dioxide into sugars and oxygen inside the chloroplasts.",
    "Please return the signed form to the office before Friday so that your place can be kept.",
)
# Long enough to average out a first slow batch, short enough for a dialog to wait on.
MEASURE_SECONDS = 1.0
# Batches double from one sentence up to this: a method that takes seconds a sentence (neural on a CPU) is measured
# on a few sentences, a fast one on full batches, as it embeds while indexing.
MAX_BATCH = 64


def sentences_per_second(method: str, seconds: float = MEASURE_SECONDS) -> float:
    """Sentences a second that ``method`` embeds here, after a one-sentence warm-up (which loads and compiles what
    it needs). Raises MethodUnavailableError when the method cannot load."""
    embedder = load(method)
    embedder.encode(SAMPLE[:1])
    done, size, started = 0, 1, time.perf_counter()
    while (elapsed := time.perf_counter() - started) < seconds or not done:
        embedder.encode([SAMPLE[i % len(SAMPLE)] for i in range(done, done + size)])
        done, size = done + size, min(2 * size, MAX_BATCH)
    return done / elapsed
