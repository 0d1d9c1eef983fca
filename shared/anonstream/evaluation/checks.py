"""Checks of a sanitized text that any domain can use: from the input and the sanitized lines alone, no gold.

Input and output align line by line (rewrites never add or remove a line break); each changed line is diffed as in
``release.LineDiff``. Each check is a small pure function over one line pair (and, where it needs one, the tagger's
label of the old value or a reference corpus's counts); ``check_release`` runs them all over a corpus and counts.

* **band contains value** (``band_excludes_value``): a changed figure whose new text is a band "a-b" (with its
  currency, percent sign and scale word: "$0.01-0.02", "5-10 million") must contain the original value at its own
  scale ("$0.017" → "$10-20" is a false generalization).
* **place containment** (``place_not_container``): a place replaced by another place name must be replaced by a
  GeoNames container of it (city → its US state, country, continent; a country → its continent), read in the
  document's country context (a city name shared by several places means those in a country the document names,
  when there is one); a neutral noun ("the area") is fine. A place GeoNames does not know can only become a
  neutral noun: a place name for it is unconfirmed (``place_unconfirmed``). A place replaced by a place of the
  same level (a city for a city) is a swap, reported apart (``place_to_place``), and a place replaced by a name
  that is no place (``place_to_non_place``: "Idaho" → "S-3") is a broken kind.
* **phrase integrity**: no decade inside a date phrase (``decade_in_date_phrase``: "Q3 the 2020s", "months of the
  2010s"), no neutral noun of another kind (``neutral_noun_of_other_kind``: "the organisation" for what the tagger
  reads on the original line as a product, an event, a place, a law, an amount or a date).
* **measured period kept** (``period_widened``): a year or a quarter that a figure on the line is measured over,
  after "for", "over", "than", "versus" or "against" ("EPS for 2016", "an increase over the second quarter of
  2015"), must not become a longer period ("for the 2010s", "over 2015": the figure given to a time it was not
  measured over).
* **order of compared figures** (``compared_figures_equal``): two different figures of one sentence joined by a
  comparison word ("to 16% from 12%") must not become the same text ("to 10-20% from 10-20%").
* **over-masking** (``over_masked``): a changed value that at least ``threshold`` identities mention in a reference
  corpus (``commonness.FormCounts``, a corpus other than the one the stream counted).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from .places import containment, countries_named, resolve_place
from .release import LineDiff, Replacement, Tagger, best_label, is_common_phrase, is_placeholder
from ..pii.patterns import is_fiscal_period

CHECKS = ("band_excludes_value", "place_not_container", "place_unconfirmed", "place_to_place", "place_to_non_place",
          "decade_in_date_phrase", "period_widened", "neutral_noun_of_other_kind", "compared_figures_equal",
          "over_masked")
# The checks whose findings are false generalizations or broken phrases (the target: none); the others are reported.
FALSE_OR_BROKEN = ("band_excludes_value", "place_not_container", "place_unconfirmed", "place_to_non_place",
                   "decade_in_date_phrase", "period_widened", "neutral_noun_of_other_kind", "compared_figures_equal")
PLACE_LABELS = frozenset(("GPE", "LOC", "FAC"))


@dataclass(frozen=True)
class Finding:
    """One check's verdict on a changed value: the check, the document, the line, old and new value."""

    check: str
    doc_id: str
    line: int
    old: str
    new: str


# ---------------------------------------------------------------------------------------------
# Figures and bands
# ---------------------------------------------------------------------------------------------
_SCALES = {"thousand": 1e3, "million": 1e6, "mn": 1e6, "billion": 1e9, "bn": 1e9, "trillion": 1e12}
_NUM = r"(?:\d+(?:,\d{3})*(?:\.\d+)?|\.\d+)"  # ".983", a batting average, too
_SCALE = r"(?:thousand|million|mn|billion|bn|trillion)\b"
_PERCENT = r"(?:%|percent\b|per cent\b)"
_FIGURE = re.compile(rf"(?P<cur>[$€£¥])?\s?(?P<num>{_NUM})\s?(?P<pct>{_PERCENT})?(?:\s?(?P<scale>{_SCALE}))?", re.I)
_BAND = re.compile(rf"(?P<cur>[$€£¥])?(?P<lo>{_NUM})(?:\s?(?P<loscale>{_SCALE}))?\s?[-–]\s?"
                   rf"[$€£¥]?(?P<hi>{_NUM})\s?(?P<pct>{_PERCENT})?(?:\s?(?P<scale>{_SCALE}))?", re.I)
_UNIT_BEFORE = re.compile(r"[$€£¥]\s?$")
_UNIT_AFTER = re.compile(rf"^\s?(?:{_PERCENT}\s?)?(?:{_SCALE})?", re.I)
_RANGE_JOIN = re.compile(rf"\s*{_PERCENT}?\s*(?:to|-|–|—|and|through)\s*[$€£¥]?", re.I)
_COMPARISON = re.compile(r"\b(?:from|to|versus|vs|compared|against|than|over|up|down)\b", re.I)
_SENTENCE_END = re.compile(r"[.!?;]\s")


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def figure_value(text: str) -> float | None:
    """The value of ``text`` when it holds exactly one figure ("$0.017", "2.5 million", "16%"), scale applied."""
    figures = list(_FIGURE.finditer(text))
    if len(figures) != 1:
        return None
    m = figures[0]
    return _number(m.group("num")) * _SCALES.get((m.group("scale") or "").lower(), 1.0)


def band_bounds(text: str) -> tuple[float, float] | None:
    """The bounds of the band "a-b" ``text`` holds, each at its scale ("5-10 million", "2 million-1 billion")."""
    m = _BAND.search(text)
    if m is None:
        return None
    scale = _SCALES.get((m.group("scale") or "").lower(), 1.0)
    lo, hi = _number(m.group("lo")), _number(m.group("hi"))
    # the scale word after the band is the lower bound's too ("5-10 million") unless the lower bound is written
    # out larger than the upper one ("500,000-1 million": half a million to a million)
    lo_scale = _SCALES.get((m.group("loscale") or "").lower(), scale if lo <= hi else 1.0)
    return lo * lo_scale, hi * scale


def band_contains(old: str, new: str) -> bool | None:
    """Whether the band ``new`` contains the one figure of ``old``; None when ``new`` is no band or ``old`` holds
    no single figure (nothing to judge)."""
    bounds, value = band_bounds(new), figure_value(old)
    if bounds is None or value is None:
        return None
    lo, hi = bounds
    tolerance = 1e-9 * max(abs(lo), abs(hi), 1.0)
    return lo - tolerance <= value <= hi + tolerance


def widen_to_units(line: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` grown over a currency sign right before it and a percent sign or scale word right after."""
    before = _UNIT_BEFORE.search(line[:start])
    if before:
        start = before.start()
    after = _UNIT_AFTER.match(line[end:])
    return start, end + (len(after.group().rstrip()) if after else 0)


def _old_span_of_new(diff: LineDiff, new_start: int, new_end: int) -> tuple[int, int] | None:
    """Character span of the old line that the new tokens in ``[new_start, new_end)`` come from (``equal`` tokens
    one to one, a ``replace`` block as a whole, inserted tokens from nothing); None when all are inserted."""
    old_tokens: list[int] = []
    for tag, i1, i2, j1, j2 in diff.opcodes:
        for j in range(j1, j2):
            s, e = diff.new_tokens[j]
            if e <= new_start or s >= new_end:
                continue
            if tag == "equal":
                old_tokens.append(i1 + j - j1)
            elif tag == "replace":
                old_tokens.extend(range(i1, i2))
    if not old_tokens:
        return None
    return diff.old_tokens[min(old_tokens)][0], diff.old_tokens[max(old_tokens)][1]


def _new_span_changed(diff: LineDiff, start: int, end: int) -> bool:
    for tag, _, _, j1, j2 in diff.opcodes:
        if tag in ("replace", "insert") and any(s < end and e > start for s, e in diff.new_tokens[j1:j2]):
            return True
    return False


def changed_bands(diff: LineDiff) -> list[tuple[str, str, bool]]:
    """(old, new, contains) of each changed band of the new line that replaced a single figure."""
    out = []
    for m in _BAND.finditer(diff.new):
        if not _new_span_changed(diff, m.start(), m.end()):
            continue
        old_span = _old_span_of_new(diff, m.start(), m.end())
        if old_span is None:
            continue
        old = diff.old[slice(*widen_to_units(diff.old, *old_span))]
        contains = band_contains(old, m.group())
        if contains is not None:
            out.append((old, m.group().strip(), contains))
    return out


def compared_figures(diff: LineDiff) -> list[tuple[str, str, bool]]:
    """(old pair, new pair, order lost) of two different figures of one sentence, joined by a comparison word ("to
    16% from 12%"), both changed; the order is lost when both became the same text ("to 10-20% from 10-20%")."""
    figures = []
    for m in _FIGURE.finditer(diff.old):
        value = figure_value(m.group())
        changed, _ = diff.touched(m.start(), m.end())
        image = diff.map_span(m.start(), m.end()) if changed else None
        if value is not None and image is not None and image[0] < image[1]:
            new = diff.new[slice(*widen_to_units(diff.new, *image))].strip()
            figures.append((m, value, new))
    out = []
    for (a, va, na), (b, vb, nb) in zip(figures, figures[1:]):
        between = diff.old[a.end():b.start()]
        if _RANGE_JOIN.fullmatch(between) and na == nb and band_contains(a.group(), nb) \
                and band_contains(b.group(), nb):
            continue  # "8% to 10%" → "5-20%": a range released as one band that holds both ends, no comparison
        if va != vb and _COMPARISON.search(between) and not _SENTENCE_END.search(between) \
                and len(between.split()) <= 8:
            out.append((f"{a.group().strip()} … {b.group().strip()}", f"{na} … {nb}", na == nb))
    return out


# ---------------------------------------------------------------------------------------------
# Date phrases and neutral nouns
# ---------------------------------------------------------------------------------------------
_MONTHS = ("January February March April May June July August September October November December "
           "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec").split()
_DATE_HEAD = "|".join([r"Q[1-4]", r"H[12]", r"FY", r"fiscal(?:\s+year)?", r"quarters?", r"half", r"months?",
                       r"weeks?", r"year", r"\d{1,2}(?:st|nd|rd|th)?"] + _MONTHS)
_DECADE_IN_DATE = re.compile(rf"\b(?:{_DATE_HEAD})\.?(?:\s+of|,)?\s+(?:the\s+)?(?P<decade>(?:1\d|20)?\d0s)\b", re.I)


def decades_in_date_phrases(diff: LineDiff) -> list[str]:
    """New-line phrases where a changed decade follows a quarter, month, half or fiscal-year word ("Q3 the 2020s",
    "months of the 2010s"): a date phrase generalized in its middle, which reads as no date."""
    return [m.group() for m in _DECADE_IN_DATE.finditer(diff.new)
            if _new_span_changed(diff, m.start("decade"), m.end("decade"))]


# A year or a quarter a figure is measured over, after the word relating the figure to it: "for 2016", "over the
# second quarter of 2015", "than Q2 2015"; not one naming an event ("for the 2016 Vuelta")
_MEASURED_PERIOD = re.compile(r"\b(?:for|over|than|versus|vs\.?|against)\s+(?:the\s+)?(?P<period>"
                              r"(?:(?:first|second|third|fourth)\s+quarter(?:\s+of)?|Q[1-4](?:\s+of)?)?\s*"
                              r"(?:fiscal\s+)?(?:1[5-9]|20)\d\d)\b(?![-/]\d)(?!(?-i:\s+[A-Z]))", re.I)
_DECADE = re.compile(r"\b(?:1\d|20)\d0s\b")
_YEAR_ONLY = re.compile(r"(?:fiscal\s+)?(?:1[5-9]|20)\d\d")


def widened_periods(diff: LineDiff) -> list[tuple[str, str]]:
    """(old, new) of each changed year or quarter that a figure on the line is measured over and that became a
    longer period: a decade for a year, a year alone for a quarter."""
    if not any(figure_value(m.group()) is not None and not _YEAR_ONLY.fullmatch(m.group().strip())
               for m in _FIGURE.finditer(diff.old)):
        return []
    out = []
    for m in _MEASURED_PERIOD.finditer(diff.old):
        changed, _ = diff.touched(m.start("period"), m.end("period"))
        image = diff.map_span(m.start("period"), m.end("period")) if changed else None
        if image is None:
            continue
        new = diff.new[image[0]:image[1]].strip()
        quarter = not _YEAR_ONLY.fullmatch(m.group("period").strip())
        if _DECADE.search(new) and not re.search(r"\byear\b", new) or quarter and _YEAR_ONLY.fullmatch(new):
            out.append((m.group("period").strip(), new))
    return out


# Head nouns of neutral phrases and the broad kind each names.
NOUN_KINDS: dict[str, str] = {
    **dict.fromkeys("organisation organization company firm corporation institution body authority agency "
                    "court bank ministry party union association group business entity".split(), "org"),
    **dict.fromkeys("area place city region country town village state location district province municipality "
                    "territory continent".split(), "place"),
    **dict.fromkeys("facility building site plant prison hospital property premises".split(), "facility"),
    **dict.fromkeys("person individual man woman people someone".split(), "person"),
    **dict.fromkeys("date period time year month day quarter decade".split(), "time"),
    **dict.fromkeys("amount number sum figure share percentage".split(), "amount"),
    **dict.fromkeys("product brand service".split(), "product"),
    **dict.fromkeys("event".split(), "event"),
    **dict.fromkeys("law act statute regulation".split(), "law"),
}
# The broad kinds a reading of the tagger (OntoNotes labels) admits; an organisation may be an institution that is
# also a building ("Kars State Hospital" → "the hospital", "Goleniów Prison" → "the prison").
LABEL_KINDS: dict[str, frozenset[str]] = {
    "ORG": frozenset(("org", "facility")), "GPE": frozenset(("place", "org")), "LOC": frozenset(("place",)),
    "FAC": frozenset(("facility", "place")), "PERSON": frozenset(("person",)), "PRODUCT": frozenset(("product",)),
    "EVENT": frozenset(("event",)), "LAW": frozenset(("law",)), "DATE": frozenset(("time",)),
    "TIME": frozenset(("time",)), "MONEY": frozenset(("amount",)), "PERCENT": frozenset(("amount",)),
    "QUANTITY": frozenset(("amount",)),
}
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def neutral_noun_kind(value: str) -> str | None:
    """The broad kind a neutral phrase names ("the organisation" → org, "a city" → place, "the first of the
    periods" → time): its head noun, the last word before "of" or the end; None for no neutral phrase or an
    unknown head."""
    if not is_common_phrase(value):
        return None
    head_part = re.split(r"\s+of\s+", value.strip(), maxsplit=1)[0]
    words = _WORD.findall(head_part.casefold())
    if not words:
        return None
    head = words[-1]
    return NOUN_KINDS.get(head) or NOUN_KINDS.get(head.removesuffix("s"))


def neutral_noun_of_other_kind(old_label: str | None, new: str) -> bool | None:
    """Whether a neutral phrase ``new`` names a kind the tagger's reading ``old_label`` of the old value excludes
    ("the organisation" for a PRODUCT); None when either side says nothing."""
    kind = neutral_noun_kind(new)
    if kind is None or old_label not in LABEL_KINDS:
        return None
    return kind not in LABEL_KINDS[old_label]


def place_verdict(old: str, new: str, context: Iterable[str] = ()) -> str | None:
    """How a place ``old`` was replaced by ``new``: "contained" (a GeoNames container), "neutral" (a common noun),
    "place_to_place" (a place of the same level: a swap), "place_not_container" (a place that does not contain it:
    a false generalization), "place_unconfirmed" (a place where GeoNames does not know the old one: no containment
    confirmed, so no true generalization either), "place_to_non_place" (a name that is no place); None for a
    placeholder."""
    if is_placeholder(new):
        return None
    if is_common_phrase(new):
        return "neutral"
    return containment(old, new, context) or "place_to_non_place"


# ---------------------------------------------------------------------------------------------
# Over-masking
# ---------------------------------------------------------------------------------------------
def common_threshold(common_k: float, identities: int) -> int:
    """``common_k`` as a count of identities: a count as given (≥ 1), a share (below 1) of the reference's
    identities, rounded up; at least 2 (a value one identity mentions points at it)."""
    return max(2, int(common_k) if common_k >= 1 else math.ceil(common_k * identities))


# ---------------------------------------------------------------------------------------------
# Over a corpus
# ---------------------------------------------------------------------------------------------
@dataclass
class CheckReport:
    """Counts of every check over a corpus: findings per check, and how many values each check judged."""

    documents: int = 0
    misaligned_documents: list[str] = field(default_factory=list)
    changed_lines: int = 0
    replacements: int = 0
    judged: dict[str, int] = field(default_factory=lambda: {c: 0 for c in ("bands", "places", "neutral_nouns",
                                                                          "figure_pairs", "reference_lookups")})
    place_verdicts: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    over_masking_threshold: int | None = None
    reference_identities: int | None = None

    def counts(self) -> dict[str, int]:
        out = {c: 0 for c in CHECKS}
        for f in self.findings:
            out[f.check] += 1
        return out

    @property
    def false_or_broken(self) -> int:
        return sum(n for c, n in self.counts().items() if c in FALSE_OR_BROKEN)

    def as_dict(self) -> dict[str, Any]:
        return {"documents": self.documents, "misaligned_documents": self.misaligned_documents,
                "changed_lines": self.changed_lines, "replacements": self.replacements, "judged": self.judged,
                "place_verdicts": self.place_verdicts, "findings": self.counts(),
                "false_or_broken": self.false_or_broken, "over_masking_threshold": self.over_masking_threshold,
                "reference_identities": self.reference_identities}

    def to_markdown(self) -> str:
        counts = self.counts()
        rows = [f"| {c} | {counts[c]} |" for c in CHECKS if c != "over_masked" or self.over_masking_threshold]
        threshold = (f"; over-masking: changed values that ≥ {self.over_masking_threshold} of "
                     f"{self.reference_identities} reference identities mention" if self.over_masking_threshold else "")
        return "\n".join([
            f"Checks over {self.documents} documents ({len(self.misaligned_documents)} misaligned, left out), "
            f"{self.changed_lines} changed lines, {self.replacements} replaced values; judged: "
            + ", ".join(f"{k} {v}" for k, v in self.judged.items()) + threshold + ".", "",
            "| check | findings |", "| --- | ---: |", *rows,
            f"| **false or broken (all but place→place and over-masking)** | {self.false_or_broken} |", "",
            "Places replaced: " + (", ".join(f"{k} {v}" for k, v in sorted(self.place_verdicts.items())) or "none")
            + "."])


def check_release(pairs: Sequence[tuple[str, str, str]], tagger: Tagger | None = None,
                  reference: Any = None, common_k: float | None = None) -> CheckReport:
    """Run every check over ``(doc_id, input text, sanitized text)``. ``tagger`` (spaCy by default) reads the old
    values on their original lines (place and neutral-noun checks); ``reference`` (``commonness.FormCounts``) and
    ``common_k`` (a count, or a share below 1 of the reference identities) turn on the over-masking check."""
    report = CheckReport()
    threshold = None
    if reference is not None and common_k is not None:
        threshold = report.over_masking_threshold = common_threshold(common_k, reference.identities)
        report.reference_identities = reference.identities
    work: list[tuple[str, int, LineDiff, list[Replacement], set[str]]] = []
    for doc_id, old_text, new_text in pairs:
        report.documents += 1
        old_lines, new_lines = old_text.split("\n"), new_text.split("\n")
        if len(old_lines) != len(new_lines):
            report.misaligned_documents.append(doc_id)
            continue
        context: set[str] | None = None
        for number, (old, new) in enumerate(zip(old_lines, new_lines)):
            if old == new:
                continue
            report.changed_lines += 1
            diff = LineDiff(old, new)
            if context is None:
                context = countries_named(old_text)
            work.append((doc_id, number, diff, diff.replacements(), context))
    if tagger is None and any(reps for *_, reps, _ in work):
        from .release import spacy_tagger

        tagger = spacy_tagger()
    old_lines_to_tag = list(dict.fromkeys(diff.old for _, _, diff, reps, _ in work if reps))
    labels = dict(zip(old_lines_to_tag, tagger(old_lines_to_tag))) if old_lines_to_tag else {}
    for doc_id, number, diff, reps, context in work:
        def find(check: str, old: str, new: str) -> None:
            report.findings.append(Finding(check, doc_id, number, old, new))

        for old, new, contains in changed_bands(diff):
            report.judged["bands"] += 1
            if not contains:
                find("band_excludes_value", old, new)
        for old, new, order_lost in compared_figures(diff):
            report.judged["figure_pairs"] += 1
            if order_lost:
                find("compared_figures_equal", old, new)
        for phrase in decades_in_date_phrases(diff):
            find("decade_in_date_phrase", "", phrase)
        for old, new in widened_periods(diff):
            find("period_widened", old, new)
        for r in reps:
            report.replacements += 1
            label = best_label(labels.get(diff.old, ()), r.old_start, r.old_end)
            if is_fiscal_period(r.old_text.strip()):
                label = "DATE"  # "Q2", "FY17": a period by its form, whatever the tagger reads (often ORG)
            verdict = neutral_noun_of_other_kind(label, r.new_text)
            if verdict is not None:
                report.judged["neutral_nouns"] += 1
                if verdict:
                    find("neutral_noun_of_other_kind", r.old_text, r.new_text)
            if label in PLACE_LABELS or label != "NORP" and resolve_place(r.old_text):  # a demonym is no place
                place = place_verdict(r.old_text, r.new_text, context)
                if place is not None:
                    report.judged["places"] += 1
                    report.place_verdicts[place] = report.place_verdicts.get(place, 0) + 1
                    if place in CHECKS:
                        find(place, r.old_text, r.new_text)
            if threshold is not None and not any(ch.isdigit() for ch in r.old_text):
                report.judged["reference_lookups"] += 1
                if reference.count(r.old_text) >= threshold:
                    find("over_masked", r.old_text, r.new_text)
    return report
