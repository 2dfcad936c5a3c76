"""Points in time as people type them for "modified since" filters: a date (2024-05-01), a date and time
(2024-05-01T14:30, local time), or an age (36h, 7d, 2w, 6m, 1y: that long before now)."""

from __future__ import annotations

import re
from datetime import datetime

# Seconds in each unit of an age; a month and a year are their average lengths in the Gregorian calendar.
_UNITS = {"h": 3600.0, "d": 86_400.0, "w": 7 * 86_400.0, "m": 30.436875 * 86_400.0, "y": 365.2425 * 86_400.0}
_AGE = re.compile(r"(\d+(?:\.\d+)?)\s*([hdwmy])", re.IGNORECASE)


def moment(text: str, now: float) -> float:
    """Seconds since the epoch for ``text`` (see the module); ``now`` is what ages count back from. Raises
    ValueError with a message that says what is accepted."""
    text = text.strip()
    age = _AGE.fullmatch(text)
    if age:
        return now - float(age.group(1)) * _UNITS[age.group(2).lower()]
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise ValueError(f"{text!r} is not a date (2024-05-01, 2024-05-01T14:30) or an age (36h, 7d, 2w, 6m, 1y)")\
            from None
