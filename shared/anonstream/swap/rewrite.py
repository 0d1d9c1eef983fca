"""Text rewrite: entity values replaced in a chunk's text, with the offsets of every change.

Paper 000 §2.1 swaps the *values* of the swapped categories between two chunks; §3.2.3 shows what
goes wrong when the two chunks hold different numbers of entities of a category (the paper's code
swaps them one by one, the extra ones "stay in the original chunk" and keep linking it to its
document) and suggests one-vs-many pairing. Here a category's whole value moves:

* ``plan_swap(sites, ours, theirs)``: our distinct values a_1..a_m (order of first mention) become
  the partner's b_1..b_n. With m = n, a_i → b_i. With m > n, a_i (i > n) are dropped from the lists
  they appear in (a mention alone in its sentence gets b_n instead). With m < n, b_{m+1..n} are
  listed right after the first mention of a_m when that mention is in a list already ("ARM and TSMC" →
  "X, Y and Z"); then the chunk's distinct values, in order of first mention, are exactly b_1..b_n and the
  chunk's tuple after the swap is the partner's tuple before it (marginals and the joint inside the swapped
  set are kept, §2.1). A lone mention takes one value: "lives in Batman" never becomes "lives in Kyrenia and
  Nicosia", a sentence about one place stays about one (§3.2.3's one-vs-many pairing would change what the
  sentence tells; b_{m+1..n} are then not written, which hides as much).
* ``plan_map(sites, fn)``: every value through ``fn`` (placeholder, generalizer); values that
  become equal inside one list collapse ("ARM, TSMC and Xilinx" → "[Organization]").
* ``apply(chunk text, entities, plans)``: one pass over the text; keeps everything outside the
  changed sites byte for byte; lists are re-rendered with their own separators; a bare possessive
  apostrophe gets its "s" when the new value does not end in s ("Siemens' plan" → "ARM's plan"); a
  leading "the" of the new value is dropped after a "the" in the text; "on" before a value that
  became a month or a year becomes "in" ("on 31 August 2006" → "in August 2006"), so does "between" before a list of
  two values that became one ("between 2017 and 2018" → "in the 2010s"), and "a"/"an" before a value
  follows the new value ("an Italian" → "a German"). Returns the new text, the
  entity spans moved to the new offsets (changed ones carry the new value as ``text`` and
  ``surrogate``, like the pii stage's replacements), and the changes.

A change is ``{start, end, category, operator, new}`` with offsets into the new text; ``old`` (the
replaced text) is returned separately for the restricted swap log only, never put on the chunk,
because the sanitized topic is not restricted (topics.py).
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from typing import Callable

from ..records import EntitySpan
from .generalize import NAME_PLACEHOLDER, country_adjective, is_bare_country_name
from .tuples import Mention, Site, is_acronym, norm_key

_BARE_APOSTROPHE = re.compile(r"^['’](?![A-Za-z])")
_ENDS_WITH_DETERMINER = re.compile(
    r"(?:^|\W)(?:the|a|an|this|that|these|those|its|his|her|their|our|my|your|whose|each|every|any|another|"
    r"no)\s+$|\w['’]s\s+$", re.I)  # a possessive is a determiner too ("Denmark's the union")
# a determiner, or a preposition, and one or two adjectives before the value ("our adjusted EBITDA", "the total G&A",
# "of adjusted EBITDA"): the value's own
# "the" goes too ("our adjusted the measure" had read twice in 50 changed lines of earnings calls)
_DETERMINER_AND_ADJECTIVES = re.compile(
    r"(?:^|\W)(?:the|a|an|its|his|her|their|our|my|your|of|in|for|on|with|from|at|by)\s+(?:(?:[a-z]+(?:ed|al|ive|ous|ic|ful|"
    r"able|ible|ary)|new|same|other|first|last|next|whole|entire|full|own)\s+){1,2}$", re.I)
# a determiner and one lower-case word that is no function word ("the outstanding Western Digital team" -> "the
# outstanding team", not "the outstanding the team"; two words may be a clause: "the company acquired Vantor")
_DETERMINER_AND_WORDS = re.compile(r"(?:^|\W)(?:the|a|an|its|his|her|their|our|my|your)\s+([a-z]+\s+)$", re.I)
# a hyphenated compound right before the value modifies it ("non-GAAP EPS" -> "non-GAAP measure", not "non-GAAP the
# measure": 6 times in the 185 test calls; "year-over-year growth")
_COMPOUND_MODIFIER_BEFORE = re.compile(r"(?:^|\s)[A-Za-z]+(?:-[A-Za-z]+)+\s+$")
# one or two adjectives opening the sentence before the value ("Adjusted EPS was" -> "Adjusted measure was", not
# "Adjusted the measure")
_ADJECTIVES_BEFORE = re.compile(r"(?<!\S)[A-Z][a-z]*(?:ed|al|ive|ous|ic|ful|able|ible|ary)\s+"
                                r"(?:[a-z]+(?:ed|al|ive|ous|ic|ful|able|ible|ary)\s+)?$")


def _opens_sentence_with_adjectives(text: str, start: int) -> bool:
    m = _ADJECTIVES_BEFORE.search(text[max(0, start - 40):start])
    return bool(m) and _sentence_start(text, start - len(m.group()))


def _after_determiner_and_modifiers(before: str) -> bool:
    m = _DETERMINER_AND_WORDS.search(before)
    return bool(m) and not any(w in _NOT_A_HEAD for w in m.group(1).split())


# "that" (also "this", "these", "those") before a name is a conjunction or a pronoun, not the name's determiner: "a
# value proposition that Agilent has" → "that the company has", unless the name qualifies the next word ("that
# Agilent product")
_DEMONSTRATIVE_BEFORE = re.compile(r"(?:^|\W)(?:this|that|these|those)\s+$", re.I)
_STARTS_WITH_THE = re.compile(r"^the\s+", re.I)
_ON_BEFORE = re.compile(r"\b([Oo])n +$")
_AT_BEFORE = re.compile(r"\b([Aa])t +$")  # "at the end of 2014" -> "in 2014", not "at 2014"
_AT_OR_ON_THE = re.compile(r"\b([AaOo])[tn] +[Tt]he +$")
_BETWEEN_BEFORE = re.compile(r"\b([Bb])etween +$")  # before a list of two values that became one
_THE_BEFORE = re.compile(r"\b[Tt]he +$")  # "the" right before a value
_YEAR_BEFORE = re.compile(r"\b\d{4}\s+$")  # "the 2011 World Championships": the year is the name's determiner
_GLOSS = re.compile(r"\s*\([^()]*\)$")  # a trailing parenthetical: "Zurich (Geschworenengericht)", "PKK (the ...)"
_MONTH = (r"(?:(?:January|February|March|April|May|June|July|August|September|October|November|December)"
          r"(?: \d{4})?|\d{4})")
# a month, a year, or a list of them ("on 24 January and 7 March 2002" -> "in January and March 2002")
_MONTH_OR_YEAR = re.compile(rf"^{_MONTH}(?:(?:,? and |,? or |, ){_MONTH})*$")

OP_SWAP = "swap"
OP_GENERALIZE = "generalize"
OP_SUPPRESS = "suppress"


@dataclass(slots=True)
class SitePlan:
    """New values for one site and the operator that produced them."""

    site: Site
    values: list[str]
    operator: str


@dataclass(slots=True)
class Rewritten:
    text: str
    entities: list[EntitySpan]
    changes: list[dict]  # {start, end, category, operator, new}: offsets into the new text
    old: list[str] = field(default_factory=list)  # replaced text per change (restricted use only)


def _dedupe(values: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for v in values:
        k = norm_key(v) or v
        if k not in seen:
            seen.add(k)
            out.append(v)
    return out


def acronym_form(value: str) -> str:
    """The acronym of a new value, for the places where the old one was written as an acronym: the initials
    of its capitalized words ("Kurdistan Workers' Party" → "KWP"); the value itself when it is an acronym
    already or has fewer than two such words."""
    if is_acronym(value):
        return value
    initials = [w[0] for w in re.findall(r"[^\W\d_][\w'’-]*", value) if w[0].isupper()]
    return "".join(initials).upper() if len(initials) >= 2 else value


def without_gloss(value: str) -> str:
    """``value`` without a trailing parenthetical gloss ("Zurich (Geschworenengericht)" → "Zurich"); the value
    itself when nothing would be left."""
    return _GLOSS.sub("", value) or value


def _form(m: Mention, value: str, remembered: bool = False) -> str:
    """The new value as this mention writes it: an acronym where the mention abbreviates a name the chunk
    (or, for a remembered value, the document) spells out; without the partner's parenthetical gloss where
    the mention had none (a gloss explains the partner's name in the partner's sentence: "lives in Gdańsk
    (Agencja Rozwoju …)" would tell the reader of a company that is not there)."""
    if m.short or (remembered and m.acronym):
        return acronym_form(value)
    return _glossed_like(m, value)


def _glossed_like(m: Mention, value: str) -> str:
    return value if _GLOSS.search(m.value) else without_gloss(value)


def swap_assignment(category_sites: list[Site], theirs: list[str],
                    fixed: dict[str, str] | None = None) -> tuple[dict[str, str | None], list[str], str | None]:
    """(ref → new value, values left over, the ref after whose first mention they go): our entities
    a_1..a_m not in ``fixed`` (first-mention order) get the partner's b_1..b_n; see the module docstring.
    Entities in ``fixed`` keep the value given there (what an earlier chunk of the document gave them)."""
    fixed = fixed or {}
    ours: list[str] = []
    for site in category_sites:
        for m in site.mentions:
            if m.ref not in fixed and m.ref not in ours:
                ours.append(m.ref)
    mapping: dict[str, str | None] = {ref: (theirs[i] if i < len(theirs) else None) for i, ref in enumerate(ours)}
    mapping.update(fixed)
    return mapping, (theirs[len(ours):] if ours else []), (ours[-1] if ours else None)


def plan_swap(category_sites: list[Site], theirs: list[str], operator: str = OP_SWAP,
              fixed: dict[str, str] | None = None) -> list[SitePlan]:
    """Plans giving the sites of one slot (text order) the partner's distinct values ``theirs``
    (first-mention order); entities in ``fixed`` get their fixed value. A mention written as an acronym
    gets the acronym of its new value."""
    if not category_sites or not (theirs or fixed):
        raise ValueError("a swap needs values on both sides")
    mapping, extras, last_ref = swap_assignment(category_sites, theirs, fixed)
    placed_extras = False
    plans = []
    for site in category_sites:
        new: list[str] = []
        for m in site.mentions:
            target = mapping[m.ref]
            if target is not None:
                new.append(_form(m, target, m.ref in (fixed or {})))
            if m.ref == last_ref and not placed_extras and len(site.mentions) > 1:
                placed_extras = True
                new.extend(_glossed_like(m, extra) for extra in extras)
        new = _dedupe(new) or [theirs[-1] if theirs else site.values[-1]]
        plans.append(SitePlan(site, new, operator))
    return plans


def plan_map(category_sites: list[Site], fn: Callable[[str], str], operator: str,
             fixed: dict[str, str] | None = None) -> list[SitePlan]:
    """Plans sending every value of the sites through ``fn`` (entities in ``fixed``: their fixed value,
    in acronym form where the mention is one); unchanged sites are left out."""
    fixed = fixed or {}
    plans = []
    for site in category_sites:
        new = _dedupe([_form(m, fixed[m.ref], True) if m.ref in fixed else fn(m.value) for m in site.mentions])
        if new != site.values:
            plans.append(SitePlan(site, new, operator))
    return plans


def _render(text: str, site: Site, values: list[str]) -> tuple[str, list[tuple[int, int]]]:
    """The site's values as a list, with the site's own separators when it had some; returns the
    rendering and each value's span in it."""
    ms = site.mentions
    last_sep = text[ms[-2].end:ms[-1].start] if len(ms) >= 2 else " and "
    mid_sep = text[ms[0].end:ms[1].start] if len(ms) >= 3 else ", "
    if len(ms) == 2 and len(values) > 2 and "," not in last_sep:
        mid_sep = ", "
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = 0
    for i, v in enumerate(values):
        if i:
            sep = last_sep if i == len(values) - 1 else mid_sep
            out.append(sep)
            pos += len(sep)
        out.append(v)
        spans.append((pos, pos + len(v)))
        pos += len(v)
    return "".join(out), spans


# a full stop that ends an abbreviation, not a sentence ("approx. 2,500 euros", "no. 44", "para. 3")
_ABBREVIATION_END = re.compile(r"(?:\b(?:approx|appr|ca|cf|e\.g|i\.e|incl|no|nos|para|paras|art|vol|pp?|op|"
                               r"seq|etc|vs|v|viz|resp|Mr|Mrs|Ms|Dr|St)|\b[A-Z])\.$", re.IGNORECASE)


def _sentence_start(text: str, start: int) -> bool:
    before = text[:start].rstrip(" \t\"'“‘(")
    if not before:
        return True
    if before[-1] == "." and _ABBREVIATION_END.search(before[-8:]):
        return False
    return before[-1] in ".!?:\n"


_NEXT_WORD = re.compile(r"^ ([a-z][a-z'’-]*)")
# words that cannot follow a modifier: a value followed by one is the head of its phrase, not a modifier ("the
# Canton of Geneva had tried" -> "Switzerland had tried", not "the Swiss had tried"; "from the beginning of 2006 the
# applicant" -> "from 2006 the applicant")
_NOT_A_HEAD = frozenset("""
had has have having was were is are be been being will would shall should can could may might must do does did
and or but nor for of in on at to from by with within without into onto upon about against between among through
during before after since until than that which who whom whose where when while as if because although though so
yet not also then there this these those its his her their our your my itself the a an each every some any no
we i you he she it they
""".split())


def _modifies_next_word(text: str, end: int) -> bool:
    """Whether the value ending at ``end`` qualifies the word after it ("the Bochum public prosecutor"): a
    lower-case next word that is no function word, auxiliary, past-tense verb ("-ed": "the Canton ordered") or
    adverb ("-ly")."""
    word = _NEXT_WORD.match(text[end:end + 40])
    if not word:
        return False
    w = word.group(1)
    return w not in _NOT_A_HEAD and not w.endswith(("ed", "ly"))


def _qualifies_next_noun(text: str, end: int, before: str) -> bool:
    """Whether the name ending at ``end`` after a demonstrative qualifies the next word ("that Agilent product",
    "those Agilent products"), not heads its clause ("that Agilent has", "that IATA reports": after a singular
    "that"/"this", a next word in -s is a verb)."""
    word = _NEXT_WORD.match(text[end:end + 40])
    singular = re.search(r"\b(?:this|that)\s+$", before, re.I)
    return _modifies_next_word(text, end) and not (singular and word and re.search(r"[^s]s$", word.group(1)))


_NEUTRAL_NOUN = re.compile(r"the ([a-z]+)")
_EDGE_OF_YEAR = re.compile(r"(?:end|beginning|start|middle|close) of (\d{4})", re.I)
_INNER_PERIOD = re.compile(r"\b(?:quarter|half|months|Q[1-4])\b", re.I)


def _fit(text: str, start: int, new_value: str, first: bool = True, end: int | None = None) -> str:
    """Small fixes at the edges of a value placed over ``text[start:end]``: a country that takes the place of a
    name used as a modifier reads as its adjective ("the Bochum public prosecutor" -> "the German public
    prosecutor", not "the Germany public prosecutor"); a leading "the" of the value dropped after a determiner
    in the text ("his the company") or a year ("the 2011 World Championships" -> "the 2010s championships", not
    "the 2010s the championships"), a "that" before a name being none ("that Agilent has" -> "that the company
    has"); a lower-case value capitalized at a sentence start only; "at the [end of the second quarter of 2017]" ->
    "at the [2017]" (then "in 2017", ``_lead``), not "at the end of 2017", a point the original was not."""
    edge = _EDGE_OF_YEAR.fullmatch(new_value)
    if edge and end is not None and _AT_OR_ON_THE.search(text[max(0, start - 8):start]) \
            and _INNER_PERIOD.search(text[start:end]):
        new_value = edge.group(1)
    if end is not None and _THE_BEFORE.search(text[max(0, start - 9):start]) and _modifies_next_word(text, end):
        new_value = country_adjective(new_value) or new_value
    noun = _NEUTRAL_NOUN.fullmatch(new_value)
    if end is not None and noun and re.match(rf"\s+{noun.group(1)}s?\b", text[end:end + 30], re.I):
        # the text names the kind right after the value ("our [US Healthcare Services] segment"): the neutral noun
        # would say it twice ("our segment segment"), so the name is suppressed instead
        return NAME_PLACEHOLDER
    if _STARTS_WITH_THE.match(new_value):
        before = text[max(0, start - 9):start]
        name_after_conjunction = text[start:start + 1].isupper() and _DEMONSTRATIVE_BEFORE.search(before) \
            and not (end is not None and _qualifies_next_noun(text, end, before))
        if first and (_ENDS_WITH_DETERMINER.search(before) or _YEAR_BEFORE.search(before)
                      or _COMPOUND_MODIFIER_BEFORE.search(text[max(0, start - 40):start])
                      or _opens_sentence_with_adjectives(text, start)
                      or _DETERMINER_AND_ADJECTIVES.search(
                text[max(0, start - 40):start]) or _after_determiner_and_modifiers(text[max(0, start - 40):start])) \
                and not name_after_conjunction:
            new_value = _STARTS_WITH_THE.sub("", new_value, count=1)
        else:
            new_value = "t" + new_value[1:]
    if first and new_value[:1].islower() and _sentence_start(text, start):
        return new_value[:1].upper() + new_value[1:]
    return new_value


def article_for(word: str) -> str:
    """"a" or "an" before ``word``, by its first sound as far as the spelling tells ("an Italian", "a
    European", "an hour", "an FBI agent")."""
    w = word.lstrip("\"“‘'([")
    if not w:
        return "a"
    if w.isupper() and len(w) > 1 and w.isalpha():
        if len(w) >= 4 and any(c in "AEIOU" for c in w[1:]):
            return "an" if w[0] in "AEIOU" else "a"  # an acronym read as a word: "a NATO", "an OPEC"
        return "an" if w[0] in "AEFHILMNORSX" else "a"  # letter by letter: "an FBI", "a BBC"
    low = w.lower()
    if low.startswith(_A_DESPITE_VOWEL):
        return "a"
    if low.startswith(_AN_DESPITE_H) or low[0] in "aeiou":
        return "an"
    return "a"


_A_DESPITE_VOWEL = ("eu", "uni", "use", "usu", "uti", "ure", "uga", "uk", "one", "once", "ouija")
_AN_DESPITE_H = ("hour", "honest", "honor", "honour", "heir")
_ARTICLE_BEFORE = re.compile(r"(?:^|(?<=\W))([Aa])(n?) +$")


def _lead(text: str, lo: int, start: int, old_value: str, new_value: str, end: int) -> tuple[str, str]:
    """The words right before a changed value that must change with it, as (old, new): "on 31 August 2006" ->
    "in August 2006" (a preposition before a value that became a month or a year); "an Italian" -> "a German"
    (the indefinite article); "the Canton of Geneva" -> "Switzerland" (a "the" before a country's bare name);
    "in the second quarter of 2016" -> "in 2016" (a "the" before a value of words that became a bare year or month,
    unless the value qualifies the next word), "at the end of 2014" -> "in 2014", "at the end of March" -> "in March".
    The value's own "the" ("the Netherlands") is ``_fit``'s."""
    if new_value == old_value:
        return "", ""
    before = text[lo:start]
    the = _THE_BEFORE.search(before)
    if the and is_bare_country_name(new_value):  # "of the Canton of Geneva" -> "of Switzerland", not "of the Switzerland"
        return the.group(0), ""
    if the and _MONTH_OR_YEAR.match(new_value) and not old_value[:1].isdigit() and not _modifies_next_word(text, end):
        at = _AT_OR_ON_THE.search(before)  # "at the end of 2014" -> "in 2014"
        if at:
            return at.group(0), ("I" if at.group(1).isupper() else "i") + "n "
        return the.group(0), ""  # not "in the 2016"; but "the second-quarter 2015 amount" keeps its "the"
    on_the = _AT_OR_ON_THE.search(before)
    if on_the and on_the.group(1) in "Oo" and _MONTH_OR_YEAR.match(new_value) and old_value[:1].isdigit():
        return on_the.group(0), ("I" if on_the.group(1) == "O" else "i") + "n "  # "On the 17 September 1997"
    at = _AT_BEFORE.search(before)
    if at and _MONTH_OR_YEAR.match(new_value) and not old_value[:1].isdigit():  # "at [the end of 2014]"
        return at.group(0), ("I" if at.group(1).isupper() else "i") + "n "
    on = _ON_BEFORE.search(before)
    if on and _MONTH_OR_YEAR.match(new_value):
        old = on.group(0)
        return old, ("I" if on.group(1) == "O" else "i") + "n" + old[2:]
    art = _ARTICLE_BEFORE.search(before)
    if art and re.match(r"an? ", new_value):  # the new value brings its own article: "an [English]" -> "a language"
        return art.group(0), ""
    if art:
        old = art.group(0)
        new = art.group(1) + article_for(new_value)[1:] + old[len(art.group(1)) + len(art.group(2)):]
        if new != old:
            return old, new
    return "", ""


def apply(text: str, entities: list[EntitySpan], plans: list[SitePlan]) -> Rewritten:
    """Apply the site plans (disjoint sites) to ``text``; see the module docstring."""
    plans = sorted(plans, key=lambda p: p.site.start)
    pieces: list[str] = []
    changes: list[dict] = []
    olds: list[str] = []
    cursor = 0
    shift = 0
    # new positions of edited mentions: entity index -> (start, end, value, changed); extra spans to add
    moved: dict[int, tuple[int, int, str, bool]] = {}
    dropped: set[int] = set()
    added: list[EntitySpan] = []
    regions: list[tuple[int, int, int]] = []  # (old start, old end, shift after) of edited regions

    for plan in plans:
        site = plan.site
        ms = site.mentions
        start, end = site.start, site.end
        if start < cursor:
            raise ValueError("overlapping site plans")
        in_place = len(plan.values) == len(ms)
        if in_place:
            values = [_fit(text, m.start, v, end=m.end) for m, v in zip(ms, plan.values)]
        else:
            values = [_fit(text, start, v, first=(i == 0)) for i, v in enumerate(plan.values)]
        lead_old, lead_new = _lead(text, max(cursor, start - 9), start, ms[0].value, values[0], ms[0].end)
        between = _BETWEEN_BEFORE.search(text[max(cursor, start - 9):start])
        if len(ms) >= 2 and len(values) == 1 and between and not lead_old:  # "between 2017 and 2018" -> "in the 2010s"
            lead_old, lead_new = between.group(0), ("I" if between.group(1) == "B" else "i") + "n "
        pieces.append(text[cursor:start - len(lead_old)])
        pieces.append(lead_new)
        new_start = start + shift - len(lead_old) + len(lead_new)
        spans: list[tuple[int, int]] = []  # value spans relative to new_start
        if in_place:
            out = []
            pos = 0
            for i, m in enumerate(ms):
                if i:
                    sep = text[ms[i - 1].end:m.start]
                    out.append(sep)
                    pos += len(sep)
                out.append(values[i])
                spans.append((pos, pos + len(values[i])))
                pos += len(values[i])
            rendered = "".join(out)
        else:
            rendered, spans = _render(text, site, values)
        # possessive: "Siemens' plan" -> "ARM's plan"
        tail = text[end:end + 2]
        possessive = ""
        if (_BARE_APOSTROPHE.match(tail) and ms[-1].value[-1:] in "sS"
                and not values[-1].endswith(("s", "S"))):
            possessive = tail[0]
            rendered += possessive + "s"
            end += 1
        pieces.append(rendered)
        old_text = text[start:end]
        if in_place:
            for i, ((a, b), m, v) in enumerate(zip(spans, ms, values)):
                if v != m.value:
                    last = possessive and i == len(ms) - 1  # the change covers the apostrophe and its s
                    lead = (lead_new, lead_old) if i == 0 else ("", "")  # ... and the preposition
                    changes.append({"start": new_start + a - len(lead[0]), "end": new_start + b + (2 if last else 0),
                                    "category": site.category, "operator": plan.operator,
                                    "new": lead[0] + v + (possessive + "s" if last else "")})
                    olds.append(lead[1] + m.value + (possessive if last else ""))
        else:
            changes.append({"start": new_start - len(lead_new), "end": new_start + len(rendered),
                            "category": site.category, "operator": plan.operator, "new": lead_new + rendered})
            olds.append(lead_old + old_text)
        for i, (a, b) in enumerate(spans):
            if i < len(ms):
                same = in_place and values[i] == ms[i].value  # untouched value: stays a clear mention
                moved[ms[i].index] = (new_start + a, new_start + b, values[i], not same)
            else:
                template = ms[-1].entity
                suffix = hashlib.sha256(f"{template.entity_id}|{i}".encode()).hexdigest()[:6]
                added.append(replace(template, start=new_start + a, end=new_start + b, text=values[i],
                                     surrogate=values[i], entity_id=f"{template.entity_id}+{suffix}"))
        for m in ms[len(spans):]:
            dropped.add(m.index)
        shift += len(lead_new) - len(lead_old) + len(rendered) - (end - start)
        regions.append((start - len(lead_old), end, shift))
        cursor = end
    pieces.append(text[cursor:])
    new_text = "".join(pieces)

    out_entities: list[EntitySpan] = []
    for i, e in enumerate(entities):
        if i in dropped:
            continue
        if i in moved:
            s, t, v, changed = moved[i]
            if not changed:
                out_entities.append(replace(e, start=s, end=t, text=v))
            else:
                out_entities.append(replace(e, start=s, end=t, text=v, surrogate=v))
            continue
        # untouched entity: drop it if an edited region swallowed it, else shift it
        delta = 0
        swallowed = False
        for r_start, r_end, r_shift in regions:
            if e.end <= r_start:
                break
            if e.start >= r_end:
                delta = r_shift
                continue
            swallowed = True
            break
        if not swallowed:
            out_entities.append(replace(e, start=e.start + delta, end=e.end + delta))
    out_entities.extend(added)
    out_entities.sort(key=lambda e: (e.start, e.end))
    return Rewritten(new_text, out_entities, changes, olds)
