"""Vetting of weak PERSON candidates (precision): bare names that are places, common words or parts of other entities.

A *bare* PERSON candidate comes from spaCy NER or from mention propagation and has no evidence of its own that
it is a person: no title ("Mr", "Judge" — those spans start with the title), no known first name or initial
("Cengiz Polat", "J. Hajduk"), and none of its words is a name word of a person already established in the
document ("Polat" after "Mr Cengiz Polat"). NER often labels single capitalised words PERSON in legal text
("a lawyer practising in Izmir", "Law no. 3713", "the Municipality refused"); such a candidate is not a PERSON
when, in this order (first rule that applies):

1. it is a known place (the countries/provinces gazetteer) or stands right after a locative preposition
   ("lives in Łódź", "born at Secunderabad", not followed by a possessive) → LOC;
2. the same form is an entity of another type in the document (the registry of earlier chunks, or a confident
   detection in this text: "FDB" is an ORG elsewhere) → that type;
3. it occurs inside a longer detected non-PERSON entity of the document ("Izmir State Security Court",
   "Diyarbakır Sur Municipality"): as the distinguishing name of a generic institution (the other words are
   all generic institutional vocabulary) it is a place → LOC; a legal word ("Law" in "Law on Associations")
   → dropped (TAB guidelines: legal references are not annotated); otherwise → the longer entity's type
   ("the Municipality" is a short reference to the ORG);
4. one word that is a function word (spaCy's English stop words: "A"), a legal word ("Law", "Act", "Code") or
   generic institutional vocabulary ("Municipality", "Court") → dropped;
5. any other one Latin-script word (no given name, no word of a person the document has established) → ORG: in
   earnings calls these are companies and brands ("Spok", "Repligen", "Cabot", "Aerie"), which a person pseudonym
   turned into people; in the 100 TAB train judgments and the first 100 biographies 14 of the 54 such words are
   persons to an annotator (they stay masked, as organisations) and 25 are names of works, bands or groups.

Before all of these, such a common word right after "studied"/"degree in" is a field of study (TAB DEM:
education, "studied Law at") → DEM.

A bare candidate that is a translation gloss — the whole of a parenthesis right after a lower-case word, no first
name, no English word: "appeal (Beschwerde)" — is dropped, whatever type NER gave it.
A placeholder an earlier redaction left ("<UNK>", "[NAME]") is dropped, whatever type NER gave it.
The "A. Background" that opens an enumerated section heading ("A. Background of the case", no final full stop)
is dropped, whatever type NER gave it.
A bare candidate of one word that is a given name and a large city, right after a locative preposition ("in
Austin"), is a place (LOC), though a given name otherwise counts as a person's own evidence.
A bare candidate of one word that owns a longer name of the document through a possessive clitic ("Sam" of
"Sam's Club", also where it stands alone: "Sam's grew") is that name's short form: its type, whatever its
anchoring (a given name, here the start of a store's name).
Conversely, initials NER typed as a place or organisation ("E.H.") become PERSON (``initials_as_persons``), and
a fiscal period typed as a name ("Q4") becomes DATETIME (``periods_as_dates``).

Letter names ("A, B and M"), initials (also when NER found them: "A.H.", "M."), titles, aliases and deny-list
entries are never vetted: their evidence is structural. The decision uses only what is known when the text is processed (this text and the document's
registry of earlier chunks), so streaming detection and whole-document processing agree on it.
"""
from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Iterable

from . import wordnet
from .base import Detection
from .gazetteer import QUALIFIED_WORD_AFTER, TITLES, alpha2, city_country, city_population, default_matcher, first_names
from .grouping import DocumentEntities, _initial_of, _name_tokens, entity_form, normalize
from .patterns import is_fiscal_period
from .policy import GENERIC_ORG_WORDS, LEGAL_WORDS, country_of
from ..spacy_files import english_stop_words


@functools.cache
def stop_words() -> frozenset[str]:
    """spaCy's English stop words (the lexeme attribute ``is_stop`` of en_core_web_* comes from this list), read
    from spaCy's file without importing spaCy, which loads torch (spacy_files.py)."""
    return english_stop_words()


BARE_RECOGNIZERS = frozenset(("spacy_ner", "propagation"))
OTHER_TYPES = ("ORG", "LOC", "MISC")
_TITLE_WORDS = frozenset(t.lower() for t in TITLES)
_LOCATIVE_BEFORE = re.compile(r"(?<![\w-])(?:in|In|near|Near|at|At)\s+$")
_POSSESSIVE_AFTER = re.compile(r"^['’]s?\b")
UPPER = "A-ZÀ-ÖØ-ÞĀĂĄĆĈĊČĎĐĒĔĖĘĚĜĞĠĢĤĦĨĪĬĮİĴĶĹĻĽĿŁŃŅŇŊŌŎŐŒŔŖŘŚŜŞŠŢŤŦŨŪŬŮŰŲŴŶŸŹŻŽ"
_INITIALS_ONLY = re.compile(rf"(?:[{UPPER}]\.\s?-?)+[{UPPER}]?|(?![AI])[{UPPER}]")  # "A.H.", "M.", "M" (not "A", "I")
_ENUMERATED = re.compile(r"[A-Z]\.\s+[A-Z][a-z]+")  # "A. Background"
_STUDY_BEFORE = re.compile(r"(?:\bstudied|\bstudying|\bstudies|\bdegree\s+in|\bdiploma\s+in|\bgraduated\s+in|"
                           r"\b(?:Bachelor|Master|Doctor|Doctorate)s?\s+of|\bmajored\s+in|\bfaculty\s+of)\s+$", re.I)


@dataclass
class VetContext:
    """What the document knows besides the text being vetted (built from the registry of earlier chunks)."""

    person_words: set[str] = field(default_factory=set)  # name words of established persons (lower case)
    other_forms: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # form -> (type, subtype)
    longer: list[tuple[list[str], str, str | None]] = field(default_factory=list)  # multi-word non-PERSON forms

    @classmethod
    def from_registry(cls, entities: DocumentEntities | None) -> "VetContext":
        ctx = cls()
        if entities is None:
            return ctx
        for ent in entities.entities:
            typ = ent["type"]
            forms = ent.get("forms") or []
            if typ == "PERSON":
                titled = "title" in (ent.get("recognizers") or [])
                for f in forms:
                    toks = _name_tokens(f)
                    if titled or len(toks) >= 2 and _first_is_given(toks[0]):
                        ctx.person_words.update(t.rstrip(".") for t in toks if len(t.rstrip(".")) > 1)
            elif typ in OTHER_TYPES or typ in ("DEM", "CODE"):
                for f in forms:
                    ctx.other_forms.setdefault(f, (typ, ent.get("subtype")))
                    words = f.split()
                    if typ in OTHER_TYPES and len(words) >= 2:
                        ctx.longer.append((words, typ, ent.get("subtype")))
        return ctx


def _words(surface: str) -> list[str]:
    return normalize(surface).split()




def _is_heading(text: str, start: int, end: int) -> bool:
    """The span is the "A. Background" that opens an enumerated section heading: it starts its line, and the line
    is short and has no final full stop ("A. Background of the case", "B. Censorship of the applicant's mail")."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line = text[line_start : line_end if line_end >= 0 else len(text)].strip()
    return (text[line_start:start].strip() == "" and bool(_ENUMERATED.fullmatch(text[start:end].strip()))
            and len(line) <= 120 and not line.endswith((".", ";", ",")))


def _is_latin(char: str) -> bool:
    return unicodedata.name(char, "").startswith("LATIN")


def _first_is_given(tok: str) -> bool:
    return tok.lower() in first_names() or _initial_of(tok) is not None


def _is_anchored(surface: str, recognizer: str) -> bool:
    """Evidence of a person of its own: a title, a known first name / initial before another name word, or
    initials only ("A.H.", "M."; TAB counts initials as PERSON; a bare "A" or "I" is vetted as a word)."""
    if recognizer not in BARE_RECOGNIZERS:
        return True
    if _INITIALS_ONLY.fullmatch(surface.strip()):
        return True
    toks = surface.split()
    if not toks:
        return False
    if toks[0].rstrip(".").lower() in _TITLE_WORDS:
        return True
    if len(toks) == 1:
        return len(toks[0]) > 2 and toks[0].lower() in first_names()  # a given name alone ("Cengiz")
    return _first_is_given(toks[0])


_INITIALS_STOP = frozenset(("U.S.", "U.K.", "E.U.", "U.N.", "A.S.", "S.A.", "P.M.", "A.M.", "E.G.", "I.E.", "S.P.A.",
                            "N.V.", "B.V.", "A.Ş.", "S.R.L.", "D.C.", "U.S.A.", "U.S.S.R.", "S.R.O.", "D.O.O.", "A.D.", "B.C."))
_INITIALS_PAIR = re.compile(rf"(?:[{UPPER}]\.\s?-?){{2,}}")
_LONE_CAPITAL = re.compile(rf"[{UPPER}]\.?")


def is_closed_class(surface: str) -> bool:
    """A pronoun, determiner or other closed-class word ("We", "I", "It", "They"): spaCy's stop words, which
    name nothing, whatever a tagger or a propagated mention made of them. An acronym that spells one ("US",
    "IT") and a lone capital other than "I" (initials: "A", "M") are not words here."""
    word = surface.strip(" .,;:'’\"")
    if len(word) >= 2 and word.isupper() or len(word) == 1 and word.isupper() and word != "I":
        return False
    return word.lower() in stop_words()


def is_known_place(surface: str) -> bool:
    """The whole of ``surface`` is a country or province of the gazetteer, or one word naming a city of
    ``CITY_NOT_PERSON`` people or more that is not also a given name ("Gdańsk"; not "Florence")."""
    if " " not in surface.strip() and (city_population(surface) or 0) >= CITY_NOT_PERSON \
            and surface.lower() not in first_names():
        return True
    return any(s == 0 and e == len(surface) and entry.type == "LOC"
               for s, e, entry, _ in default_matcher().finditer(surface))


CITY_NOT_PERSON = 100_000


_GLOSS_BEFORE = re.compile(r"(?<!\w)[a-z][a-z'’-]+\s*\(\s*$")


_GLOSS_REST = re.compile(r"[^()\n]{1,400}?\)")


def _foreign_title_rest(rest: str) -> bool:
    """``rest`` (the parenthesis after the span, up to its ")") is lower-case words, at least two, at most a third
    of them English (WordNet): the span opens an original-language title ("(Ustawa o skardze na naruszenie prawa
    strony …)")."""
    m = _GLOSS_REST.match(rest)
    if not m:
        return False
    words = re.findall(r"[^\W\d_]+", m.group()[:-1])
    if len(words) < 2 or any(not w.islower() for w in words):
        return False
    return sum(wordnet.is_common_word(w) for w in words) * 3 <= len(words)


_PLACEHOLDER = re.compile(r"[<\[]?[A-Z][A-Z0-9_]*[>\]]?")


def is_redaction_placeholder(text: str, start: int, end: int) -> bool:
    """The span is a placeholder an earlier redaction left ("<UNK>", "[NAME]", "[PERSON_3]"): upper-case letters,
    digits or underscores inside angle or square brackets. It names nobody, and rewriting it again would only turn a
    marker a reader understands into a false value ("<UNK>" read as an organisation)."""
    span = text[start:end].strip()
    if not _PLACEHOLDER.fullmatch(span):
        return False
    opened = span[0] in "<[" or text[max(0, start - 1):start] in ("<", "[")
    closed = span[-1] in ">]" or text[end:end + 1] in (">", "]")
    return opened and closed


def is_translation_gloss(text: str, start: int, end: int) -> bool:
    """The span is the whole of a parenthesis right after a lower-case word — the original-language term for a
    common noun ("appeal (Beschwerde)", "public prosecutor (Oberstaatsanwalt)") — or opens one whose other words
    are lower-case and not English (a statute's original title: "a reasonable time (Ustawa o skardze …)"), and
    no word of it is a known first name ("his brother (Ahmet)") or a common English word (WordNet)."""
    if not _GLOSS_BEFORE.search(text[max(0, start - 40) : start]):
        return False
    if not re.match(r"\s*\)", text[end : end + 3]) and not _foreign_title_rest(text[end : end + 401]):
        return False
    surface = text[start:end]
    if not re.fullmatch(r"[^\W\d_]+(?:[ -][^\W\d_]+)*", surface):
        return False  # "Revisorhuset A/S", "S.A.": a company's name, not a word
    words = _words(surface)
    names = first_names()
    return bool(words) and not any(w.lower() in names or wordnet.is_common_word(w) or city_population(w) is not None
                                   for w in words) and not is_known_place(surface)


def initials_as_persons(text: str, dets: list[Detection]) -> list[Detection]:
    """NER reads initials used as names ("E.H.", "A.H.") as GPE or ORG now and then; TAB counts initials as
    PERSON. Two or more dotted capitals typed LOC/ORG/MISC by NER become PERSON (common abbreviations excepted),
    and so does a lone capital letter ("this is J.", a speaker's initial in a transcript: a letter is no
    organisation, place or product by itself; "I" is a word, see ``is_closed_class``)."""
    out = []
    for d in dets:
        surface = text[d.start : d.end].strip()
        if (d.recognizer == "spacy_ner" and d.type in OTHER_TYPES
                and (_INITIALS_PAIR.fullmatch(surface) and surface.replace(" ", "").upper() not in _INITIALS_STOP
                     or _LONE_CAPITAL.fullmatch(surface) and surface[0] != "I")):
            d = replace(d, type="PERSON", subtype="PERSON", rule=f"{d.rule}+vet:initials")
        out.append(d)
    return out


_LANGUAGE_NOUN_AFTER = re.compile(r"\s+language\b")
_YEARS = re.compile(r"(?:1[89]|20)\d\d(?:\s?[/–-]\s?(?:(?:1[89]|20)\d\d|\d\d))?")  # "2008/2009", "1990-91"


def periods_as_dates(text: str, dets: list[Detection]) -> list[Detection]:
    """A fiscal period the tagger typed as a name ("Q4" → PERSON 6 times in 40 earnings calls, "Q1" → ORG) is a
    date (``patterns.is_fiscal_period``): DATETIME, so it is generalized as a date ("Q4 2016" → "2016"; a bare
    "Q4" dates nothing and stays), never a person pseudonym or "the period". So is a day of the calendar typed as an
    event ("New Year", "Labor Day", "Ramadan": ``wordnet.names_a_calendar_day``), which without a year dates
    nothing either ("a happy New Year" had read "a happy the year"). A language's name that qualifies the noun after
    it is a demonym ("an English retired footballer", DEM; it had read "an a language retired footballer"). Years
    typed as a name ("back in 2008/2009" → GPE, which had read "back in the facility") are a date too."""
    out = []
    for d in dets:
        surface = text[d.start:d.end].strip(" .,;:")
        if d.type in ("PERSON",) + OTHER_TYPES and (is_fiscal_period(surface) or _YEARS.fullmatch(surface)):
            d = replace(d, type="DATETIME", subtype="DATE", rule=f"{d.rule}+vet:period")
        elif d.type == "MISC" and d.subtype in (None, "EVENT") and wordnet.names_a_calendar_day(surface):
            d = replace(d, type="DATETIME", subtype="DATE", rule=f"{d.rule}+vet:calendar_day")
        elif d.type == "MISC" and d.subtype == "LANGUAGE" and " " not in surface \
                and QUALIFIED_WORD_AFTER.match(text, d.end) and not _LANGUAGE_NOUN_AFTER.match(text, d.end):
            d = replace(d, type="DEM", subtype="NORP", rule=f"{d.rule}+vet:modifier")
        out.append(d)
    return out


def cities_before_their_country(text: str, dets: list[Detection]) -> list[Detection]:
    """A name the tagger typed as an organisation, a person or a thing that GeoNames knows as a city of the country
    named right after it is that city ("moved to Lyon, France": ORG, which had read "moved to [Name], France")."""
    out = []
    for d in dets:
        if d.type in ("PERSON",) + OTHER_TYPES and d.type != "LOC":
            after = _COUNTRY_AFTER.match(text, d.end)
            code = alpha2(country_of(normalize(after.group(1)))) if after else None
            if code and city_country(text[d.start:d.end], prefer=code) == code:
                d = replace(d, type="LOC", subtype="GPE", rule=f"{d.rule}+vet:city_of_country")
        out.append(d)
    return out


_COUNTRY_AFTER = re.compile(r",[ \t]+((?:the[ \t]+)?[A-Z][\w’'.-]*(?:[ \t]+[A-Z][\w’'.-]*){0,3})")


def name_words_as_persons(text: str, dets: list[Detection], person_words: set[str]) -> list[Detection]:
    """A name NER typed as an organisation, place or thing whose every word is a word of the name of a person the
    document has established ("Gerald Rudolph Ford Jr." ... "Ford was born", "Moseley was sent off") is that
    person: PERSON, so it is pseudonymized with the person instead of generalized as "the organisation"."""
    out = []
    for d in dets:
        if d.recognizer == "spacy_ner" and d.type in OTHER_TYPES and person_words:
            words = [w.rstrip(".") for w in _name_tokens(entity_form("PERSON", text[d.start:d.end]))]
            if words and len(words) <= 2 and all(len(w) > 1 and w in person_words for w in words) \
                    and text[d.start:d.start + 1].isupper():
                d = replace(d, type="PERSON", subtype="PERSON", rule=f"{d.rule}+vet:name_words")
        out.append(d)
    return out


def _named_city_after_locative(text: str, d: Detection) -> bool:
    """One word that is a given name and a city of ``CITY_NOT_PERSON`` people or more, right after "in", "at" or
    "near" and not followed by a possessive ("in Austin", "at Florence"). Rule 1 does not vet a given name, but
    here the place reading wins: of such words after a locative in the 100 TAB train judgments and the 100
    biographies, annotators typed 9 a place and none a person."""
    surface = text[d.start:d.end].strip()
    return (" " not in surface and (city_population(surface) or 0) >= CITY_NOT_PERSON
            and bool(_LOCATIVE_BEFORE.search(text[max(0, d.start - 8):d.start]))
            and not _POSSESSIVE_AFTER.match(text[d.end:d.end + 3]))


def _thing_head(surface: str, person_words: set[str]) -> tuple[str, str | None] | None:
    """A name NER typed PERSON whose last word is a title-case common noun WordNet knows only as a thing, never as a
    person (``wordnet.names_a_thing``): "Gruen Trophy", "Kennedy Avenue", "Winter Olympics", "Major Leagues",
    "Rideau Carleton Raceway". Where the name starts with a given name ("Horst Wessel Song") the thing's noun must
    follow a whole name (two words or more); after initials it is a surname: "Wesley Wall" and "J.P. Buhl" stay persons.
    Returns the type and subtype to give it: ORG for a group's noun ("League"), MISC otherwise (an EVENT for an
    event's). In the 100 TAB train judgments and the 100 biographies 21 such spans were another type to an
    annotator, none a person."""
    words = re.findall(r"[^\W\d_][\w'’-]*", surface)
    if len(words) < 2 or len(words[-1]) < 4 or not words[-1][0].isupper() or not words[-1][1:].islower():
        return None
    if words[-1] in person_words or not wordnet.names_a_thing(words[-1]):
        return None
    before = surface.split()[:-1]
    if not before or before[-1].endswith(".") or _initial_of(before[-1]) is not None:
        return None  # "J.P. Buhl": initials, then a surname
    if _is_anchored(surface, "spacy_ner") and (len(before) < 2 or before[0].rstrip(".").lower() in _TITLE_WORDS):
        return None
    first = wordnet.noun_lexfiles(words[-1])[0]
    if first == wordnet.LEXFILE_GROUP:
        return "ORG", "ORG"
    return "MISC", "EVENT" if first == wordnet.LEXFILE_EVENT else None


def _owned_name(surface: str, longer: list) -> tuple[str, str | None] | None:
    """The (type, subtype) of a longer non-PERSON name of the document that ``surface``, one word, owns through a
    possessive clitic ("Sam" → "Sam's Club", an ORG), else None. Of the names annotators typed in the 100 TAB
    train judgments and the 100 biographies, none of the 29 that hold "X's Word" is a person."""
    word = normalize(surface.strip())
    if " " in word:
        return None
    owners = (f"{word}'s", f"{word}’s")  # the forms of ``longer`` are normalized (lower case)
    return next(((typ, sub) for lw, typ, sub in longer if lw[0] in owners), None)


class PersonVetter:
    """Applies the rules of the module docstring to the PERSON candidates of one text."""

    def __init__(self, confident: float = 0.75):
        self.confident = confident

    @staticmethod
    def _common_word(word: str) -> bool:
        w = word.lower()
        return w in stop_words() or w in GENERIC_ORG_WORDS or bool(LEGAL_WORDS.fullmatch(word))

    def vet(self, text: str, dets: list[Detection], ctx: VetContext | None = None,
            others: Iterable[Detection] = ()) -> list[Detection]:
        """Return ``dets`` with bare PERSON candidates relabelled or dropped. ``others`` are further detections of
        the same text (e.g. the first-round ones when vetting propagated mentions) used as document evidence."""
        ctx = ctx or VetContext()
        dets = cities_before_their_country(text, periods_as_dates(text, initials_as_persons(text, dets)))
        pool = list(dets) + list(others)
        person_words = set(ctx.person_words)
        for d in pool:
            surface = text[d.start : d.end]
            if d.type == "PERSON" and _is_anchored(surface, d.recognizer) and d.score >= self.confident:
                toks = _name_tokens(entity_form("PERSON", surface))
                if d.recognizer == "title" or len(toks) >= 2 and _first_is_given(toks[0]):
                    person_words.update(t.rstrip(".") for t in toks if len(t.rstrip(".")) > 1)
        dets = name_words_as_persons(text, dets, person_words)
        if not any(d.recognizer in BARE_RECOGNIZERS for d in dets):
            return dets
        pool = list(dets) + list(others)
        other_forms = dict(ctx.other_forms)
        longer = list(ctx.longer)
        for d in pool:
            surface = text[d.start : d.end]
            if d.type == "PERSON":
                continue
            if d.type in OTHER_TYPES + ("DEM", "CODE") and d.score >= self.confident:
                form = entity_form(d.type, surface)
                other_forms.setdefault(form, (d.type, d.subtype))
                words = form.split()
                if d.type in OTHER_TYPES and len(words) >= 2:
                    longer.append((words, d.type, d.subtype))
        out = []
        for d in dets:
            if d.recognizer in BARE_RECOGNIZERS and _is_heading(text, d.start, d.end):
                continue  # "A. Background (of the case)": an enumerated section heading, of whatever NER type
            if d.recognizer in BARE_RECOGNIZERS and is_translation_gloss(text, d.start, d.end):
                continue  # "the public prosecutor (Oberstaatsanwalt)": the original term for a common noun
            owned = _owned_name(text[d.start:d.end], longer) if d.type == "PERSON" and d.recognizer in BARE_RECOGNIZERS \
                else None
            if owned is not None:  # "Sam" of "Sam's Club": the short form of the name it owns
                out.append(replace(d, type=owned[0], subtype=owned[1], rule=f"{d.rule}+vet:possessor"))
                continue
            if d.type == "PERSON" and d.recognizer in BARE_RECOGNIZERS and _named_city_after_locative(text, d):
                out.append(replace(d, type="LOC", subtype="GPE", rule=f"{d.rule}+vet:locative_city"))
                continue
            thing = _thing_head(text[d.start:d.end], person_words) if d.type == "PERSON" \
                and d.recognizer in BARE_RECOGNIZERS else None
            if thing is not None:  # "Gruen Trophy", "Horst Wessel Song": a name built on a common noun of a thing
                out.append(replace(d, type=thing[0], subtype=thing[1], rule=f"{d.rule}+vet:thing_head"))
                continue
            if d.type != "PERSON" or _is_anchored(text[d.start : d.end], d.recognizer):
                out.append(d)
                continue
            verdict = self._verdict(text, d, person_words, other_forms, longer)
            if verdict is None:
                out.append(d)
            elif verdict[0] is not None:
                typ, sub, why = verdict
                out.append(replace(d, type=typ, subtype=sub, rule=f"{d.rule}+vet:{why}"))
        return out

    def _verdict(self, text: str, d: Detection, person_words: set[str], other_forms: dict, longer: list):
        """None: keep as PERSON; (None, None, why): drop; (type, subtype, why): relabel."""
        surface = text[d.start : d.end]
        words = _words(surface)
        if not words or any(w.strip(".") in person_words for w in words):
            return None
        single = len(words) == 1
        if single and self._common_word(surface) and _STUDY_BEFORE.search(text[max(0, d.start - 24) : d.start]):
            return "DEM", "EDUCATION", "field_of_study"  # "studied Law at"
        # 1. places
        if is_known_place(surface):
            return "LOC", "GPE", "place"
        if _LOCATIVE_BEFORE.search(text[max(0, d.start - 8) : d.start]) and not _POSSESSIVE_AFTER.match(text[d.end : d.end + 3]):
            return "LOC", "GPE", "locative"
        # 2. the same form is another entity of the document
        form = " ".join(words)
        if form in other_forms:
            typ, sub = other_forms[form]
            return typ, sub, "same_form"
        # 3. inside a longer non-PERSON entity
        n = len(words)
        for lw, typ, sub in longer:
            if len(lw) <= n:
                continue
            at = next((i for i in range(len(lw) - n + 1) if lw[i : i + n] == words), None)
            if at is None:
                continue
            if single and LEGAL_WORDS.fullmatch(surface):
                return None, None, "legal_word"
            rest = [w for j, w in enumerate(lw) if not at <= j < at + n and w not in stop_words()]
            if at == 0 and rest and all(w in GENERIC_ORG_WORDS for w in rest) and not self._common_word(surface):
                return "LOC", "GPE", "institution_place"
            return typ, sub, "in_longer"
        # 4. a common word
        if single and self._common_word(surface):
            return None, None, "common_word"
        # 5. one Latin-script word no person of the document bears and no given name
        if single and len(surface.strip()) > 1 and _is_latin(surface.strip()[0]):
            return "ORG", "ORG", "unestablished"
        return None
