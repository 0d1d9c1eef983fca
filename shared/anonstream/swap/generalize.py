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
_MONTH_WORD = r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|" \
              r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_WEEKDAY = r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+)?"
_ORD = r"(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"

# Each pattern matches a whole value (after stripping); groups: day?, month (name or number), year?.
_DATE_PATTERNS = [
    re.compile(rf"^{_WEEKDAY}(?:the\s+)?(?P<day>\d{{1,2}}){_ORD}(?:\s+of)?\s+{_MONTH_WORD},?\s+{_YEAR}$", re.I),
    re.compile(rf"^{_WEEKDAY}{_MONTH_WORD}\s+(?P<day>\d{{1,2}}){_ORD},?\s+{_YEAR}$", re.I),
    re.compile(rf"^(?:(?:early|mid|late|the\s+end\s+of|the\s+beginning\s+of)[\s-]+)?{_MONTH_WORD},?\s+(?:of\s+)?{_YEAR}$", re.I),
    re.compile(rf"^{_YEAR}-(?P<mnum>\d{{1,2}})-(?P<day>\d{{1,2}})(?:[T ][0-9:.+Z-]+)?$"),
    re.compile(rf"^{_YEAR}-(?P<mnum>\d{{1,2}})$"),
    re.compile(rf"^(?P<day>\d{{1,2}})[./](?P<mnum>\d{{1,2}})[./]{_YEAR}$"),
    re.compile(rf"^{_WEEKDAY}(?:the\s+)?(?P<day>\d{{1,2}}){_ORD}(?:\s+of)?\s+{_MONTH_WORD}$", re.I),
    re.compile(rf"^{_WEEKDAY}{_MONTH_WORD}\s+(?P<day>\d{{1,2}}){_ORD}$", re.I),
    re.compile(rf"^(?:in\s+)?{_YEAR}$"),
]
_HAS_PRECISION = re.compile(r"\d|\b(?:" + "|".join(m[:3] for m in MONTHS) + r")[a-z]*\b", re.I)


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

    ``level``: ``month`` or ``year``. A value at the target precision or coarser stays as it is
    ("August 2006" at month level, "2006"); a value this parser does not read is kept when it has no
    digit and no month name ("the following day", "recently": nothing precise to hide) and otherwise
    replaced by ``fallback`` (default ``[Date]``).
    """

    name = "date"

    def __init__(self, level: str = "month", fallback: str = "[Date]"):
        if level not in ("month", "year"):
            raise ValueError("date generalizer level must be 'month' or 'year'")
        self.level = level
        self.fallback = fallback

    def parse(self, value: str) -> tuple[int | None, int | None, int | None]:
        """(year, month 1-12, day) of ``value``, None where absent; all None when unreadable."""
        text = " ".join(value.split()).strip(" ,.;")
        for pattern in _DATE_PATTERNS:
            m = pattern.match(text)
            if not m:
                continue
            groups = m.groupdict()
            year = int(groups["year"]) if groups.get("year") else None
            month = None
            if groups.get("month"):
                month = _MONTH_ABBR[groups["month"].lower()[:3]] + 1
            elif groups.get("mnum"):
                month = int(groups["mnum"])
            day = int(groups["day"]) if groups.get("day") else None
            if month is not None and not 1 <= month <= 12:
                continue
            if day is not None and not 1 <= day <= 31:
                continue
            return year, month, day
        return None, None, None

    def generalize(self, value: str, category: str) -> str:
        year, month, day = self.parse(value)
        if year is None and month is None:
            return value if not _HAS_PRECISION.search(value) else self.fallback
        if self.level == "year" or month is None:
            return str(year) if year is not None else self.fallback
        name = MONTHS[month - 1].capitalize()
        return f"{name} {year}" if year is not None else name


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
