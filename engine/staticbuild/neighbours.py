"""Step 6: each word's nearest label words, written beside the model file for hybrid search to read
(engine.facets.neighbours; docs/decisions/0020-shipped-word-neighbours.md).

The table answers what engine.search.related asks, so it is made with that module's constants; a model shipped
before it, or after they change, gets a new one with::

    python -m engine.staticbuild.neighbours resources/static/model.npz
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

from engine.embed.static import NEIGHBOURS_FILE, StaticEmbedder
from engine.facets.space import FacetSpace
from engine.search.related import PER_WORD, SIMILARITY, SLACK

log = logging.getLogger(__name__)


def write_neighbours(model: Path) -> Path:
    """Compute the neighbour table of the model file ``model`` and write it beside it; returns its path."""
    started = time.perf_counter()
    table = FacetSpace(StaticEmbedder.from_file(model)).neighbour_table(PER_WORD + SLACK, SIMILARITY)
    out = model.with_name(NEIGHBOURS_FILE)
    table.save(out)
    log.info("wrote %s: %d neighbours of %d words in %.1f s (%.1f MB)", out, table.words.size,
             table.offsets.size - 1, time.perf_counter() - started, out.stat().st_size / 1e6)
    return out


def main(argv: list[str] | None = None) -> None:
    """Write the neighbour table of the model file named on the command line."""
    parser = argparse.ArgumentParser(prog="python -m engine.staticbuild.neighbours", description=__doc__.split("\n\n")[0])
    parser.add_argument("model", type=Path, help="a static model file (resources/static/model.npz)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    write_neighbours(args.model)


if __name__ == "__main__":
    main()
