"""Where a passage is in its file, said as a person would: "p. 3" of a PDF, "slide 3" of a presentation.

Readers number a presentation's slides as its pages (engine.ingest.readers.office); a plain string function, loaded
with the window before the engine.
"""

from __future__ import annotations

from pathlib import PurePath

# Files whose pages are slides.
SLIDES = frozenset({".pptx", ".odp"})


def page_label(path: str, page: int | None, short: bool = True) -> str:
    """"p. 3" (``short``) or "page 3", "slide 3" in a presentation; "" where the passage has no page."""
    if not page:
        return ""
    if PurePath(path).suffix.lower() in SLIDES:
        return f"slide {page}"
    return f"p. {page}" if short else f"page {page}"
