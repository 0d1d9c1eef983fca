"""Span extension to the whole name, after overlap resolution (TAB guidelines: a mention covers the full
expression that names the entity, not the part a recognizer happened to find).

* ``extend_to_ordinal`` — a numeric ordinal right before a name or a position belongs to it ("the 17th Academy
  Awards", "the 38th president", "the 15th Legislative Assembly").
* ``extend_to_range_start`` — a quantity takes the first end of its range when the tagger left it out ("20 to
  [25 basis points]").
* ``extend_to_title_run`` — a name inside a longer run of capitalised words takes the whole run ("Canadian"
  → "Canadian Film Award", "Academy Awards" → "17th Academy Awards", "Broadway" → "Bullets over Broadway",
  "Star Wars" → "Star Wars: Droids"). Runs may contain up to two lower-case joiners between capitalised
  words ("of the", "over"), a colon inside a title, and numbers after the first word ("BBC Radio 5 Live").
  A run stops at legal references ("Article 6 of the Convention" is two things), and sentence-initial
  function words ("In", "The", "His") are not part of it. PERSON names do not seed runs (a name followed by a
  capitalised word is usually two mentions), but a run seeded by something else absorbs the names inside it
  ("Enjoy Every Sandwich: Songs of Warren Zevon").
"""
from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, replace
from typing import Sequence

from ..spacy_files import english_stop_words
from .base import Detection
from .gazetteer import TITLES
from .merge import GROUP_HEADS
from .patterns import MONTH_NAMES, MOVED_FROM_BEFORE
from .policy import LEGAL_WORDS

_ORDINAL_BEFORE = re.compile(r"\b\d{1,3}(?:st|nd|rd|th)\s+$")
_ORDINAL_PREFIX = re.compile(r"\d{1,3}(?:st|nd|rd|th)\s+(?=\S)")
_ORDINAL_TYPES = ("ORG", "MISC", "DEM", "LOC")


def without_ordinal(surface: str) -> str:
    """The name an ordinal-extended mention is decided and grouped by ("12th Assize Court" → "Assize Court"):
    the ordinal distinguishes instances but does not make a public body identifying."""
    m = _ORDINAL_PREFIX.match(surface)
    return surface[m.end():] if m else surface


def extend_to_ordinal(text: str, d: Detection, floor: int) -> Detection:
    """``d`` extended over a numeric ordinal right before it, not before ``floor``."""
    if d.type not in _ORDINAL_TYPES:
        return d
    m = _ORDINAL_BEFORE.search(text, max(floor, d.start - 12), d.start)
    if not m:
        return d
    return replace(d, start=m.start(), rule=f"{d.rule}+ordinal")


_MONTHS = frozenset(MONTH_NAMES.split("|")) | frozenset("Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec".split())
_NOT_IN_RUN = frozenset("""
Article Articles Rule Rules Section Sections Protocol Protocols No Nos Paragraph Paragraphs Chapter Part
Annex Appendix Application Applications Case Cases Mr Mrs Ms Dr
""".split()) | _MONTHS
_LEADING_FUNCTION = frozenset("""
The A An In On At After Before During From To For With By As Of And But Or If When While Since Until Although
His Her Its Their Our My Your He She It They We You I This That These Those There Here Then Also However
I'm I've I'd I'll I’m I’ve I’d I’ll
""".split())


def _leading_function(word: str) -> bool:
    """A capitalized function word, which opens a sentence or clause and no name ("So North America is off" is
    no name "So North America"): the list above, and any of spaCy's English stop words but an acronym ("US").
    Only a run's first word is tested so: inside a name a stop word may stand ("Court of First Instance")."""
    return word in _LEADING_FUNCTION or not word.isupper() and word.lower() in english_stop_words()


_JOINERS = frozenset("of the and & over on in a an for to from with de du la le des del der von van y".split())
_TOKEN = re.compile(r"[^\s]+")
_CAP_TOKEN = r"[(\[“\"‘']*[^\W\d_a-z]\S*"  # superset: any letter but a-z; the scanner decides
_CANDIDATE = re.compile(
    rf"(?<!\S){_CAP_TOKEN}(?:[ \t]+(?:{_CAP_TOKEN}|(?:\d{{1,3}}(?:st|nd|rd|th)?[^\s\w]*|"
    rf"{'|'.join(sorted(_JOINERS, key=len, reverse=True))})(?!\S)))*")
_CORE = re.compile(r"^([(\[“\"‘']*)(.*?)([)\]”\"’',;:.!?]*)$")
_ABBREV = re.compile(r"^(?:[A-Z]\.?|(?:[A-Za-z]\.){2,}[A-Za-z]?|St|Jr|Sr|Co|Ltd|Inc|Bros|Mt|Ft)$")
_NUMBER = re.compile(r"^\d{1,3}(?:st|nd|rd|th)?$")
_POSSESSIVE = re.compile(r"['’]s$")


@dataclass(frozen=True, slots=True)
class TitleRun:
    start: int
    end: int
    loose: bool  # contains lower-case joiners or a colon: only MISC names take such runs


def title_runs(text: str, seeds: Sequence[tuple[int, int]] | None = None) -> list[TitleRun]:
    """Runs of two or more capitalised words (module docstring). A run ends at sentence punctuation (a full stop
    after an abbreviation or an initial does not end it), brackets and quotes, a legal-reference word, a month or
    a year; capitalised function words and trailing joiners are trimmed. With ``seeds`` (spans sorted by start),
    only the runs in stretches that hold one of them whole are found: no other run can take a seed."""
    runs: list[TitleRun] = []
    seed_starts = [s for s, _ in seeds] if seeds is not None else None
    cur: list[tuple[int, int, str]] = []  # (start, end, kind) with kind CAP | NUM | JOIN | COLON

    def close():
        while cur and cur[-1][2] in ("JOIN", "COLON"):
            cur.pop()
        if cur and _POSSESSIVE.search(text, cur[-1][0], cur[-1][1]):
            cur[-1] = (cur[-1][0], cur[-1][1] - 2, cur[-1][2])  # "the Regional Court’s decision"
        caps = sum(1 for t in cur if t[2] == "CAP")
        if caps >= 1 and len([t for t in cur if t[2] in ("CAP", "NUM")]) >= 2:
            runs.append(TitleRun(cur[0][0], cur[-1][1], any(t[2] in ("JOIN", "COLON") for t in cur)))
        cur.clear()

    for candidate in _CANDIDATE.finditer(text):  # only stretches of capitalised words, numbers and joiners
        close()
        if seeds is not None:
            first = bisect_left(seed_starts, candidate.start())
            last = bisect_left(seed_starts, candidate.end(), first)
            if not any(seeds[k][1] <= candidate.end() for k in range(first, last)):
                continue
        for m in _TOKEN.finditer(text, candidate.start(), candidate.end()):
            lead, core, trail = _CORE.match(m.group(0)).groups()
            start = m.start() + len(lead)
            end = start + len(core)
            if lead:
                close()
            if not core:
                close()
                continue
            possessive = bool(_POSSESSIVE.search(core))
            if possessive:
                core = core[:-2]
            if core.isupper() and len(core) > 1 and (core.lower() in _JOINERS or core.capitalize() in _LEADING_FUNCTION):
                close()  # an all-caps heading ("AS TO THE FACTS")
                continue
            if core[0].isupper() and core not in _NOT_IN_RUN and not (not cur and _leading_function(core)):
                kind = "CAP"
            elif cur and _NUMBER.match(core):
                kind = "NUM"
            elif cur and core in _JOINERS and sum(1 for t in cur[-2:] if t[2] == "JOIN") < 2:
                kind = "JOIN"
            else:
                close()
                if core[0].isupper() and core not in _NOT_IN_RUN and not _leading_function(core):
                    cur.append((start, end, "CAP"))  # the first word of a new run
                continue
            if kind == "CAP" and cur and core in _LEADING_FUNCTION and cur[-1][2] != "JOIN":
                close()  # "Istanbul The ..." never happens inside a name; a new sentence or clause starts
                continue
            cur.append((start, end, kind))
            if trail:
                if trail == ":" and kind == "CAP":
                    cur.append((end, end + 1, "COLON"))
                elif trail == "." and not possessive and _ABBREV.match(core):
                    cur[-1] = (start, end + 1, kind)
                else:
                    close()
    close()
    return runs


_RUN_BLOCKERS = ("PERSON", "DATETIME", "CODE", "QUANTITY")
_RUN_SEED_TYPES = ("ORG", "MISC", "LOC", "DEM")
_POSITIONS = frozenset(TITLES) | frozenset("""President Vice-President Speaker Secretary Chairman Chairperson Chair
Chancellor Leader Director Head Member Prosecutor Consul Envoy Representative Treasurer Deputy Spokesperson Commander
Rector Dean Officer Agent""".split())


_SENTENCE_BEFORE = re.compile(r"(?:^|[.!?:;]\s+|\n\s*)$")


def _opens_sentence_with_common_word(text: str, start: int) -> bool:
    """Whether the word at ``start`` opens a sentence or a line and is a common English word, capitalized only by
    its place ("Sales", "Revenue")."""
    from .wordnet import is_common_word

    word = _TOKEN.match(text, start)  # no copy of the text around it: this runs for every loose run
    opens = _SENTENCE_BEFORE.search(text, max(0, start - 20), start)  # "^" is the text's start, not the window's
    return bool(word and opens) and is_common_word(word.group().strip(",;:"))


def _after_last_joiner(text: str, run: TitleRun, seed: Detection) -> TitleRun:
    """The part of ``run`` from the first word after its last joiner before ``seed`` ("Sales of the [Boeing 787]"
    → "Boeing 787"), loose only if joiners remain in it."""
    words = list(_TOKEN.finditer(text, run.start, seed.start))
    starts = [w.start() for w in words[1:]] + [seed.start]
    after_joiner = [starts[k] for k, w in enumerate(words) if w.group() in _JOINERS
                    and (k + 1 == len(words) or words[k + 1].group() not in _JOINERS)]
    start = after_joiner[-1] if after_joiner else run.start
    return TitleRun(start, run.end, any(w.group() in _JOINERS for w in _TOKEN.finditer(text, start, run.end)))


def extend_to_title_run(text: str, dets: list[Detection], runs: list[TitleRun]) -> list[Detection]:
    """Each seed detection inside a run covers the run, unless the run holds a PERSON, date, code or quantity
    detection (then they are separate mentions) or the run is loose and the seed not MISC."""
    if not runs:
        return dets
    out: list[Detection] = []
    i = 0
    for k, d in enumerate(dets):
        while i < len(runs) and runs[i].end <= d.start:
            i += 1
        if out and out[-1].start <= d.start and d.end <= out[-1].end:
            continue  # inside a run an earlier seed took
        run = runs[i] if i < len(runs) else None
        if (run is None or d.type not in _RUN_SEED_TYPES or not (run.start <= d.start and d.end <= run.end)
                or (run.start, run.end) == (d.start, d.end) or (run.loose and d.type != "MISC") or d.subtype == "OCCUPATION"
                or any(o.type in _RUN_BLOCKERS for o in dets if o is not d and o.start < run.end and o.end > run.start)):
            out.append(d)
            continue
        last = text[run.start:run.end].split()[-1]
        if run.loose and run.start < d.start and _opens_sentence_with_common_word(text, run.start):
            run = _after_last_joiner(text, run, d)  # "Sales of the Boeing 787": the capital is the sentence's
            if (run.start, run.end) == (d.start, d.end) or run.start > d.start:
                out.append(d)
                continue
        if last in _POSITIONS:
            out.append(d)  # "Kentucky State Treasurer": a place and a position
            continue
        while out and out[-1].start >= run.start:
            out.pop()  # a name earlier in the run
        typ, subtype = d.type, d.subtype
        if typ in ("LOC", "DEM"):  # "Canadian Film Award", "Turkish Criminal Code", "Polish-German ... Foundation"
            typ = "ORG" if last.lower() in GROUP_HEADS else "MISC"
            subtype = "LAW" if LEGAL_WORDS.search(text, run.start, run.end) else None
        out.append(replace(d, start=min(run.start, d.start), end=max(run.end, d.end), type=typ, subtype=subtype,
                           rule=f"{d.rule}+run"))
    return out


# the first end of a range the tagger left out: "20 to [25 basis points]", "3-[4%]"
_YEAR = re.compile(r"(?:19|20)\d\d\b")
_RANGE_START_BEFORE = re.compile(r"(?<![\w.,])\d[\d,.]*%?\s*(?:to|-|–)\s*$")


def extend_to_range_start(text: str, d: Detection, floor: int) -> Detection:
    """A quantity whose range's first end stands right before it takes it ("growing 20 to 25 basis points": the
    tagger's "25 basis points" alone was banded into "20 to 20-30 basis points"); not after "from", where the two
    are where a figure moved from and to ("rose from 1% to 5%"), unless a range is said ("ranging from 1 to 5")."""
    if d.type != "QUANTITY" or not text[d.start:d.start + 1].isdigit():
        return d
    m = _RANGE_START_BEFORE.search(text[max(floor, d.start - 24):d.start])
    if m is None or _YEAR.match(m.group(0)):  # "from 2015 to 25 stores": a year, then the count it came to
        return d
    start = d.start - len(m.group(0))
    if MOVED_FROM_BEFORE.search(text[max(0, start - 30):start]):
        return d  # "shot up from 1% to 5%": where a figure moved from and to, two figures, not one range
    return replace(d, start=start)



def extend_names(text: str, dets: list[Detection]) -> list[Detection]:
    """The extensions over detections sorted by start and non-overlapping (after overlap resolution)."""
    out: list[Detection] = []
    for i, d in enumerate(dets):
        out.append(extend_to_range_start(text, extend_to_ordinal(text, d, dets[i - 1].end if i else 0),
                                         dets[i - 1].end if i else 0))
    seeds = [(d.start, d.end) for d in out if d.type in _RUN_SEED_TYPES]
    return extend_to_title_run(text, out, title_runs(text, seeds)) if seeds else out
