"""Generalization operators (release status G, and the fallback of rare chunks that found no partner).

The paper (000, §4 and §3.2.3) names "other suppressive measures ... for chunks that are not suitable
for swapping" as the remedy for its low swap rate; generalization is the least destructive of them
(SDC global recoding, cf. the paper's remark on recoding in §3.1.4): the released text keeps a true
but coarser value. A hierarchy-based generalizer comes later; this module is the plug-in point:

* ``Generalizer.generalize(value, category)`` returns the coarser value (never the same string when
  it can help it; callers treat an unchanged value as "could not generalize").
* ``register_generalizer(name, factory)`` makes ``{name: ..., **params}`` usable in a release file.

Built in: ``label`` (the category's coarse label, e.g. ``[Organization]``) and ``date`` (dates to
month/year or year: "31 August 2006" → "August 2006").
"""
from __future__ import annotations

import re
from abc import ABC, abstractmethod
from typing import Any, Callable

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
          "october", "november", "december")
_MONTH_ABBR = {m[:3]: i for i, m in enumerate(MONTHS)}
_MONTH = (r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
          r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_WEEKDAY = r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+)?"
_ORD = r"(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})(?!\d)"
# Dates inside a value, most precise forms first. Groups: day (day-level forms), month (name) or
# mnum (number), year. The value's other words ("between", "early", "and") are kept.
_DAY_LEVEL = [
    re.compile(rf"\b{_WEEKDAY}(?:the\s+)?(?P<day>\d{{1,2}}){_ORD}(?:\s+of)?\s+{_MONTH}(?:,?\s+{_YEAR})?", re.I),
    re.compile(rf"\b{_WEEKDAY}{_MONTH}\s+(?P<day>\d{{1,2}}){_ORD}\b(?:,?\s+{_YEAR})?", re.I),
    re.compile(rf"\b{_YEAR}-(?P<mnum>\d{{1,2}})-(?P<day>\d{{1,2}})(?:[T ][0-9:.+Z-]+)?\b"),
    re.compile(rf"\b(?P<day>\d{{1,2}})[./](?P<mnum>\d{{1,2}})[./]{_YEAR}"),
]
_MONTH_LEVEL = [
    re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}", re.I),
    re.compile(rf"\b{_YEAR}-(?P<mnum>\d{{1,2}})\b(?!-)"),
]


def _month_of(groups: dict[str, str | None]) -> int | None:
    if groups.get("month"):
        return _MONTH_ABBR[groups["month"].lower()[:3]] + 1
    if groups.get("mnum"):
        month = int(groups["mnum"])
        return month if 1 <= month <= 12 else None
    return None


class Generalizer(ABC):
    """Maps a value of a category to a coarser one (one step up a hierarchy)."""

    name: str = "generalizer"

    @abstractmethod
    def generalize(self, value: str, category: str) -> str:
        """The coarser value for ``value`` of ``category``."""


class LabelGeneralizer(Generalizer):
    """The coarsest step: the category's label, e.g. ``[Organization]`` (or a configured label)."""

    name = "label"

    def __init__(self, label: str | None = None):
        self.label = label

    def generalize(self, value: str, category: str) -> str:
        return self.label or f"[{category}]"


class DateGeneralizer(Generalizer):
    """Dates to month/year ("31 August 2006", "2006-08-31" → "August 2006") or to the year.

    ``level``: ``month`` or ``year``. Every date found *inside* the value is coarsened and the other
    words stay ("between 15 December 2002 and 3 January 2003" → "between December 2002 and January
    2003"); a value with nothing finer than the target level stays as it is ("August 2006",
    "2006", "18 years", "the following day"). At year level a date without a year becomes
    ``fallback`` (default ``[Date]``).
    """

    name = "date"

    def __init__(self, level: str = "month", fallback: str = "[Date]"):
        if level not in ("month", "year"):
            raise ValueError("date generalizer level must be 'month' or 'year'")
        self.level = level
        self.fallback = fallback

    def _coarse(self, m: re.Match) -> str:
        groups = m.groupdict()
        month = _month_of(groups)
        year = groups.get("year")
        if month is None:  # e.g. a 13th "month": not a date, leave it
            return m.group(0)
        if self.level == "year":
            return year if year else self.fallback
        name = MONTHS[month - 1].capitalize()
        return f"{name} {year}" if year else name

    def generalize(self, value: str, category: str) -> str:
        out = value
        for pattern in _DAY_LEVEL:
            out = pattern.sub(self._coarse, out)
        if self.level == "year":
            for pattern in _MONTH_LEVEL:
                out = pattern.sub(self._coarse, out)
        return out


_REGISTRY: dict[str, Callable[..., Generalizer]] = {
    "label": LabelGeneralizer,
    "date": DateGeneralizer,
}


def register_generalizer(name: str, factory: Callable[..., Generalizer]) -> None:
    """Make ``{name: <name>, **params}`` usable as a category's ``generalizer`` in release files."""
    _REGISTRY[name] = factory


def build_generalizer(spec: dict[str, Any] | None) -> Generalizer:
    """A generalizer from its release spec ``{"name": ..., **params}`` (default: label)."""
    spec = dict(spec or {"name": "label"})
    name = spec.pop("name")
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown generalizer {name!r}; known: {', '.join(sorted(_REGISTRY))}") from None
    return factory(**spec)


def known_generalizers() -> list[str]:
    return sorted(_REGISTRY)
