"""Durations typed on the command line: `30d`, `12h`, `90m`, `3600s`, `2w` (a token's lifetime,
how far back `agentdex audit` looks)."""

from __future__ import annotations

import datetime as dt
import re

_DURATION = re.compile(r"(\d+)([smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def duration(text: str) -> dt.timedelta | None:
    """`text` as a duration; None when it is not one.

    Raises OverflowError for one too long for a timedelta.
    """
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        return None
    return dt.timedelta(**{_UNITS[match[2]]: int(match[1])})
