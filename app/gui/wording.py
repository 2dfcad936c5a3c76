"""Numbers as a person reads them in the window: durations of indexing runs and of estimates."""

from __future__ import annotations


def duration_text(seconds: float) -> str:
    """"42 s", "3 min 05 s", "2 h 07 min": seconds only while they matter."""
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
