"""Combining recognizer output: span refinement (titles, corporate suffixes, foreign-name parentheticals, an
organisation's name in its own language in lower case, leading articles) and overlap resolution.

Overlap resolution, in order of precedence:
1. validated contact/financial identifiers (e-mail, URL, phone, IBAN, card, IP) win over anything;
2. then confident detections (score ≥ ``confident``) before weak ones;
3. then the longest span (paper 001 §4.2: "resolve overlaps by keeping the longest span");
4. then the higher score.
Weak detections only fill gaps that confident ones leave.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import replace
from typing import Any

from . import wordnet
from .base import Detection
from .gazetteer import TITLES
from .gazetteer import city_population, first_names
from .kinds import LEGAL_FORM, place_kind
from .vetting import UPPER, is_known_place
from .occurrences import find_occurrences
from .patterns import MONTH_NAMES
from .policy import CASE_PARTY, country_of

STRONG_RECOGNIZERS = frozenset(("email", "url", "phone", "iban", "card", "ip"))
# pattern rules whose span is exact as found: "5 ft 11 in" ends with its unit, not a dangling "in"
EXACT_RULES = frozenset(("feet_inches",))

_LEADING = re.compile(r"(?:the|The|THE|a|an|A|An)\s+")  # used with match(text, start, end)
# used with search(text, start, end); a dangling joiner goes too ("the Fourth Chamber of" | "the Diyarbakır State
# Security Court", "Turkish Revolutionary Communist Party /")
_TRAILING = re.compile(r"(?:['’]s|[\s,.;:“”\"'’(\[-]+|\s+(?:of|the|and|or|for|on|in|at|to)|\s+/)$")
_INITIAL_DOT = re.compile(r"\b[A-Z]\.$")
_ABBREV_DOT = re.compile(r"(?:\b[A-Z]|\b(?:Ltd|Inc|Co|Jr|Sr|Št|p\.m|a\.m)|\.[a-zA-Z])\.$")
_PAREN_NOT_NAME = re.compile(r"[\d§]|\b(?:Rule|Rules|Article|Articles)\b")
_NAME_WORDS = re.compile(r"[\w'’‑-]+")
_TITLE_BEFORE = re.compile(rf"(?:\b(?:{'|'.join(TITLES)})\.?\s+)$")
_CORP_SUFFIX = re.compile(
    r"^,?\s+(?:A/S|AS|ApS|Aps|I/S|K/S|P/S|Ltd\.?|Limited|Inc\.?|plc|PLC|GmbH|AG|KG|SA|S\.A\.|SpA|S\.p\.A\.|BV|B\.V\.|"
    r"NV|N\.V\.|AB|Oy|Oyj|Sp\.\s?z\s?o\.o\.|sp\.\s?z\s?o\.o\.|S\.A\.S\.|SARL|S\.à\.r\.l\.|A\.Ş\.|AŞ|Ltd\.\s?Şti\.|"
    r"LLC|LLP|Co\.|& Co\.?|d\.o\.o\.|s\.r\.o\.|a\.s\.|Kft\.?|Zrt\.?|S\.R\.L\.|SRL|OOO|ZAO|OAO|PJSC|JSC)(?![\w])")
_PAREN = re.compile(r"^\s?\((?:the\s+)?(?P<inner>[^()\n]{2,200})\)")
_JOINERS = frozenset(("of", "the", "and", "for", "de", "van", "von", "der", "den", "del", "della", "di", "da", "du",
                      "le", "la", "al", "el", "bin", "ibn", "i", "w", "nad", "na", "pod", "am", "an", "im", "zu",
                      "y", "e", "on", "in", "at", "s", "d'", "l'", "dos", "das", "ter", "ten", "af", "och", "og"))


def _junk_name(surface: str, typ: str) -> bool:
    """NER names that contain plain lower-case words are usually foreign-language text misread as names."""
    words = _NAME_WORDS.findall(surface)
    if not words:
        return True
    if typ == "PERSON":
        return any(w[0].islower() and w.lower() not in _JOINERS for w in words)
    return words[0][0].islower() and words[0].lower() not in _JOINERS


LOWER = "a-zß-öø-ÿ\u0100-\u017f"  # lower-case Latin letters, Latin Extended-A included ("ł", "ş", "ğ")
_LOWER_WORDS = re.compile(rf"[{LOWER}]+(?: [{LOWER}]+){{0,3}}")


def is_native_name(inner: str) -> bool:
    """One to four lower-case words, none an English word (WordNet): a name in the original language
    ("sulh ceza mahkemesi", "hovrätten"), not "see below"."""
    return (_LOWER_WORDS.fullmatch(inner) is not None and wordnet.available()
            and not any(wordnet.is_common_word(w) for w in inner.split()))


def refine(text: str, dets: list[Detection]) -> list[Detection]:
    """Adjust span boundaries (see module docstring); returns new Detection objects."""
    out = []
    n = len(text)
    for d in dets:
        s, e = d.start, d.end
        if d.recognizer not in STRONG_RECOGNIZERS and d.rule not in EXACT_RULES:
            # leading article (TAB spans exclude it) and trailing possessive/punctuation
            m = _LEADING.match(text, s, e)
            if m and e > m.end():
                s = m.end()
            while True:
                m = _TRAILING.search(text, s, e)
                if not m or m.start() == s:
                    break
                if text[e - 1] == ".":
                    if d.type == "PERSON" and _INITIAL_DOT.search(text[s:e]):
                        break  # "J." initial keeps its dot
                    if _ABBREV_DOT.search(text[s:e]):
                        break
                e = m.start()
        # snap the end over a hyphen/slash continuation of the last word ("DHKP" -> "DHKP-C")
        while e < n - 1 and text[e] in "-‑/" and text[e + 1].isalnum() and text[e - 1].isalnum():
            e += 1
            while e < n and (text[e].isalnum() or text[e] in "'’"):
                e += 1
        if e <= s:
            continue
        if d.recognizer == "spacy_ner" and d.type in ("PERSON", "ORG", "LOC") and _junk_name(text[s:e], d.type):
            continue
        ctx = list(d.context)
        if d.type == "PERSON":
            m = _TITLE_BEFORE.search(text[max(0, s - 16) : s])
            if m:
                s -= len(m.group(0))
                ctx.append(m.group(0).strip())
        if d.type in ("ORG", "LOC", "MISC"):
            m = _CORP_SUFFIX.match(text[e : e + 20])
            if m and d.type == "ORG":
                e += m.end()
            m = _PAREN.match(text[e : e + 170])
            if m:
                inner = m.group("inner").strip()
                if inner[:1].isupper() and not _PAREN_NOT_NAME.search(inner) and "applicant" not in inner:
                    e += m.end()
                elif d.type == "ORG" and is_native_name(inner):
                    e += m.end()  # "Court of Cassation (yargıtay)": the body's name in its own language
        out.append(Detection(s, e, d.type, d.score, d.recognizer, d.rule, ctx, d.subtype))
    return out


_COUNTRY_TAIL = re.compile(r"^,\s*$")
# an administrative division named by its place: "Canton" + " of " + "Geneva" is the Canton of Geneva, not the
# city of Canton (Guangzhou) and Geneva
_DIVISION_WORDS = frozenset("canton province county region district voivodeship department oblast commune "
                            "municipality prefecture governorate".split())
_OF_GAP = re.compile(r"^ of (?:the )?$")
_OF_NAME = re.compile(rf"^ of (?:the )?[{UPPER}][\w'’-]*(?: [{UPPER}][\w'’-]*)*")


_PUBLIC_HEAD_OF = re.compile(r"\b(?:Minister|Ministry|Department|Directorate|Office|Commissioner|Inspector|Inspectorate|"
                             r"Secretary|Secretariat|Agency|Board) of (?:the )?$")


def extend_to_public_head(text: str, d: Detection, floor: int) -> Detection:
    """An organisation named right after a capitalized public-body head and " of " is the public body's subject
    ("the Minister of " + "Agriculture and Food Economics"): the detection starts at the head, not after
    ``floor`` (the previous detection's end), so the name is decided as the public body it is."""
    if d.type != "ORG":
        return d
    m = _PUBLIC_HEAD_OF.search(text[max(floor, d.start - 20):d.start])
    return replace(d, start=d.start - len(m.group(0)), rule=d.rule + "+head_of") if m else d


# a numbered or named chamber of a court: "the 7th Chamber of the " + "Ankara Administrative Court", "the Joint Civil
# Chambers of the " + "Court of Cassation"
_CHAMBER = (r"(?:\d{1,2}(?:st|nd|rd|th)|First|Second|Third|Fourth|Fifth|Sixth|Seventh|Eighth|Ninth|Tenth|Eleventh|"
            r"Twelfth|(?:Joint )?(?:Civil|Criminal|Administrative))(?: [A-Z][a-z]+)? (?:Chambers?|Divisions?|Panel)")
_CHAMBER_OF = re.compile(rf"\b{_CHAMBER} of (?:the )?$")
_CHAMBER_ONLY = re.compile(_CHAMBER)


def extend_to_chamber(text: str, d: Detection, floor: int) -> Detection:
    """A court of two or more words right after a chamber and " of " starts at the chamber ("the 5th Chamber of the
    Ankara Civil Court of First Instance"), not before ``floor`` (the previous detection's end)."""
    if d.type != "ORG" or " " not in text[d.start:d.end]:
        return d
    m = _CHAMBER_OF.search(text[max(floor, d.start - 50):d.start])
    return replace(d, start=d.start - len(m.group(0)), rule=d.rule + "+chamber") if m else d


_COMPANY_JOINER = re.compile(r"^ (?:and|&|ve|und|et|i|og|en) $")  # "Smith and Jones Ltd", "X İnşaat ve Ticaret A.Ş."
# the rest of a cited judgment's title after one of its parties: ", James and Webster v. the United Kingdom"
_NAME = r"[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*)*"
_CASE_TITLE_AFTER = re.compile(rf"^(?:,\s+{_NAME})*(?:,?\s+and\s+(?:[Oo]thers|{_NAME}))?\s+v\.?\s+(?:the\s+)?[A-Z]")
_LOCATIVE_BEFORE = re.compile(r"\b(?:in|at|from|to|of)\s+(?:the\s+)?$")
# an appositive that makes a name one of the case's parties: "a Turkish national, Yüksel İğdeli (“the applicant”)"
_APPLICANT_AFTER = re.compile(r"^,?\s*\((?:“|\"|‘|')the (?:(?:first|second|third|fourth|fifth) )?applicants?(?:”|\"|’|')\)")


def as_company(text: str, d: Detection, limit: int) -> Detection:
    """A name that ends with a company's legal form ("Global A.Ş", "Regnmark I/S") is an ORG whatever the
    recognizer said, the tagger's PERSON included ("Emlak Bankası A.Ş" had become a person's pseudonym); the legal
    form's last full stop joins the span when a recognizer left it out ("A.Ş" + ".")."""
    if d.type not in ("MISC", "LOC", "ORG") and not (d.type == "PERSON" and d.recognizer == "spacy_ner"):
        return d
    end = d.end
    if not LEGAL_FORM.search(text[d.start:end]):
        if end < limit and text[end:end + 1] == "." and LEGAL_FORM.search(text[d.start:end + 1]):
            end += 1
        else:
            return d
    if (d.type, end) == ("ORG", d.end):
        return d
    return replace(d, end=end, type="ORG", subtype="ORG", rule=d.rule + "+legal_form")


_IN_BEFORE = re.compile(r"(?<![\w-])(?:[Ii]n|[Nn]ear|[Ll]ives in|[Ll]iving in)\s+$")
_RESIDENCE_BEFORE = re.compile(r"(?<![\w-])(?:lives|living|lived|live|resides|residing|resided|born) in\s+$", re.I)


def as_place(text: str, d: Detection) -> Detection:
    """An ORG that is only a place's name right after "in" or "near" is the place ("lived in Famagusta", "lives in
    Kandıra": a city of the gazetteer, a country or a province), and any name after "lives in" / "born in": one
    lives in a place ("lives in Nowogród Bobrzański", a town too small for the gazetteer). Not after "at":
    "worked at Toyota" is the company, and Toyota a city too."""
    before = text[max(0, d.start - 12):d.start]
    if d.type != "ORG" or "legal_form" in d.rule or not _IN_BEFORE.search(before):
        return d
    surface = text[d.start:d.end]
    if city_population(surface) is not None or is_known_place(surface) or _RESIDENCE_BEFORE.search(before):
        return replace(d, type="LOC", subtype="GPE", rule=d.rule + "+place")
    return d


def as_case_party(text: str, d: Detection) -> Detection:
    """A person named in the title of a cited judgment ("Young, James and Webster v. the United Kingdom"):
    its recognizer gains ``CASE_PARTY``, which the entity keeps among its recognizers, so that the policy leaves
    a person *only* cited so in clear (published case law, ``case_party_no_mask``)."""
    if d.type != "PERSON" or not _CASE_TITLE_AFTER.match(text[d.end:d.end + 120]):
        return d
    return replace(d, recognizer=d.recognizer + CASE_PARTY)


def as_applicant(text: str, d: Detection) -> Detection:
    """A name the text introduces as a party ("…, Yüksel İğdeli (“the applicant”)") that a recognizer typed as
    a place or a miscellaneous name is a PERSON, unless it is a company (``as_company`` ran first) or a place
    the sentence puts something in ("a company … registered in Turkey (“the applicants”)")."""
    if d.type not in ("MISC", "LOC") or not _APPLICANT_AFTER.match(text[d.end:d.end + 40]):
        return d
    if _LOCATIVE_BEFORE.search(text[max(0, d.start - 12):d.start]) or country_of(text[d.start:d.end]):
        return d
    return replace(d, type="PERSON", subtype="PERSON", rule=d.rule + "+applicant")


def extend_division(text: str, d: Detection, limit: int) -> Detection:
    """A place that is only a division word ("Canton", "District") followed by " of <Name>" that no detection
    covers ("the Canton of Geneva" where the NER saw only "Canton") is the division named: extended over
    " of <Name>", ending before ``limit`` (the next detection). Unchanged otherwise."""
    if d.type != "LOC" or text[d.start:d.end].lower() not in _DIVISION_WORDS:
        return d
    m = _OF_NAME.match(text[d.end:limit])
    return replace(d, end=d.end + m.end(), rule=d.rule + "+division") if m else d


# Lower-case head nouns that make a name into the name of a group or an event ("Sheraton hotel", "Sima clan",
# "Nigerian government", "Gujarat riots", "Davis Cup match"): the head belongs to the entity.
GROUP_HEADS = frozenset("""
government governments school schools college university academy hotel club clubs team teams squad clan clans
dynasty organization organisation magazine newspaper embassy consulate crown party movement band forces army
regiment company firm church monastery temple constituency assembly federation association union league group
institute foundation ministry hospital orchestra choir network channel station prison prisons
""".split())
EVENT_HEADS = frozenset("""
massacre riots riot scandal match matches game games award awards prize medal cup championship championships
tournament competition festival war campaign election elections revolution uprising protests affair cause
""".split())
_MODIFIER_STOP = frozenset("""
of the a an and or but in on at to for from by with as is was were are be been has had have who which that this
these those its his her their our my your he she it they we you not no
""".split())
_WORDS_AFTER = re.compile(r"^(?:\s+[a-z][\w‑-]*){1,3}")
_LOWER_WORD = re.compile(r"[a-z][\w‑-]*")
_NAME_TOKEN = re.compile(r"[\w'’-]+")
_LOWER_CASE_WORD = re.compile(r"(?<![\w-])[a-z][\w'’-]*")
_HEAD_TYPES = ("ORG", "LOC", "DEM", "PERSON", "MISC")


_INDEFINITE_BEFORE = re.compile(r"(?:^|\W)(?:a|an|another|any|one|each|every|no)\s+$", re.I)


def extend_to_head_noun(text: str, d: Detection, limit: int) -> Detection:
    """``d`` extended over up to two lower-case modifiers and a group/event head noun right after it, ending
    before ``limit`` (the next detection); re-typed ORG (group) or MISC (event). Unchanged otherwise, and after an
    indefinite determiner: "another IT company", "a US company" describe a company, they name none."""
    if d.type not in _HEAD_TYPES or _INDEFINITE_BEFORE.search(text, max(0, d.start - 12), d.start):
        return d
    m = _WORDS_AFTER.match(text[d.end : min(limit, d.end + 60)])
    if not m:
        return d
    for word in _LOWER_WORD.finditer(m.group(0)):
        w = word.group(0)
        kind = "ORG" if w in GROUP_HEADS else "MISC" if w in EVENT_HEADS else None
        if kind is not None:
            return replace(d, end=d.end + word.end(), type=kind, rule=f"{d.rule}+head:{w}")
        if w in _MODIFIER_STOP:
            break
    return d


_CAP_WORDS = rf"[{UPPER}][\w'’-]*(?: [{UPPER}][\w'’-]*)?"
# a nickname or a former name between a person's names: "Patrick 'Nobby' Clarke", "Laetitia Cardier (Sabiha) Bakırcı"
_NICKNAME_GAP = re.compile(rf"^ (?:['‘“\"]{_CAP_WORDS}['’”\"]|\({_CAP_WORDS}\)) $")
_ABBREVIATED_NAME = re.compile(rf"\b[{UPPER}][{LOWER}]{{1,2}}$")  # "Cz" of "Mr Cz. Sławski"


def joins_person(text: str, prev: Detection, d: Detection) -> bool:
    """Two PERSON detections that are one name: a nickname or a former name between them (``_NICKNAME_GAP``), or
    the first ends with an abbreviated given name and only ". " follows it ("Mr Cz." + "Sławski")."""
    if prev.type != "PERSON" or d.type != "PERSON":
        return False
    gap = text[prev.end : d.start]
    return bool(_NICKNAME_GAP.match(gap)) or gap == ". " and bool(_ABBREVIATED_NAME.search(text, prev.start, prev.end))


_MONTH_DAY_END = re.compile(rf"\b(?:{MONTH_NAMES}|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\.?\s+\d{{1,2}}"
                            r"(?:st|nd|rd|th)?$")
_YEAR_ONLY = re.compile(r"(?:1[5-9]|20)\d\d")


def _two_cities(text: str, first: Detection, second: Detection) -> bool:
    """Two cities side by side are a list, not a city and its container ("the cities of Battle Creek, Springfield
    and Albion": one span had been swapped for "Manchester, Connecticut"). Of the place pairs "A, B" the gold of the
    TAB train judgments and the biographies holds with a city as B, the 9 with a city as A too are two mentions."""
    return place_kind(text[first.start:first.end]) == place_kind(text[second.start:second.end]) == "city"


def combine_adjacent(text: str, dets: list[Detection]) -> list[Detection]:
    """After overlap resolution: "December 31" + ", 2017" → one DATETIME (a US-style date the tagger split at its
    comma); "Canton" + "of Geneva" → one LOC ("Canton of Geneva Court" → one ORG); "City, Country" → one LOC (an
    address-like place; not when the first place is itself a country, "Denmark, Switzerland", nor when both are
    cities, ``_two_cities``: those are lists); a place, name or organisation right before an ORG with only a space
    between ("Batman" + "Assize Court", "Şehit Tevfik" + "Fikret Erciyes police station") →
    one ORG; a name followed by a group or event head noun ("Sima clan", "Gujarat riots") →
    one ORG or MISC (``extend_to_head_noun``); an ORG right after "Minister of" starts at the head
    (``extend_to_public_head``), a court right after "the 7th Chamber of" at the chamber (``extend_to_chamber``;
    joined with the chamber when that was detected); a name ending with a legal form is a company (``as_company``),
    joined with a name before it by "and"/"ve"/"&" ("ANO İnşaat ve Ticaret Limited Şirketi"); an ORG that is only a place's name is the
    place (``as_place``); a name introduced as "(“the applicant”)" is a person (``as_applicant``); a person in a cited
    judgment's title is marked as its party (``as_case_party``); a person's names around a nickname or former name, or
    after an abbreviated given name, are one person (``joins_person``)."""
    limits = [dets[i + 1].start if i + 1 < len(dets) else len(text) for i in range(len(dets))]
    dets = [as_case_party(text, as_applicant(text, as_place(text, as_company(
                text, extend_to_head_noun(text, extend_division(text, d, limit), limit), limit))))
            for d, limit in zip(dets, limits)]
    out: list[Detection] = []
    for d in dets:
        floor = out[-1].end if out else 0
        d = extend_to_chamber(text, extend_to_public_head(text, d, floor), floor)
        if len(out) > 1 and joins_person(text, out[-2], d):  # the nickname was detected too ("Nobby")
            out[-2:] = [replace(out[-2], end=d.end, rule=out[-2].rule + "+nickname")]
            continue
        if out and joins_person(text, out[-1], d):
            out[-1] = replace(out[-1], end=d.end, rule=out[-1].rule + "+name")
            continue
        if out:
            prev = out[-1]
            gap = text[prev.end : d.start]
            if prev.type == d.type == "DATETIME" and gap == ", " and _MONTH_DAY_END.search(text[prev.start:prev.end]) \
                    and _YEAR_ONLY.fullmatch(text[d.start:d.end]):  # "December 31" + ", 2017": one US-style date
                out[-1] = replace(prev, end=d.end, rule=prev.rule + "+year")
                continue
            if prev.type == "LOC" and d.type == "LOC" and _COUNTRY_TAIL.match(gap) \
                    and country_of(text[prev.start:prev.end]) is None and not _two_cities(text, prev, d):
                out[-1] = replace(prev, end=d.end, rule=prev.rule + "+loc", score=max(prev.score, d.score))
                continue
            if prev.type == "LOC" and d.type in ("LOC", "ORG") and _OF_GAP.match(gap) \
                    and text[prev.start:prev.end].lower() in _DIVISION_WORDS:
                out[-1] = replace(d, start=prev.start, rule=d.rule + "+division")
                continue
            if prev.type == "ORG" and d.type == "ORG" and _OF_GAP.match(gap) and " " in text[d.start:d.end] \
                    and _CHAMBER_ONLY.fullmatch(text[prev.start:prev.end]):  # "7th Chamber" + "Ankara ... Court"
                out[-1] = replace(d, start=prev.start, rule=d.rule + "+chamber")
                continue
            if prev.type in ("MISC", "ORG") and d.type == "ORG" and "legal_form" in d.rule and _COMPANY_JOINER.match(gap):
                out[-1] = replace(d, start=prev.start, rule=d.rule + "+joined")  # one company's name
                continue
            if prev.type in ("LOC", "PERSON", "ORG") and d.type == "ORG" and gap == " " and text[d.start].isupper():
                out[-1] = replace(d, start=prev.start, rule=d.rule + "+prefix")
                continue
        out.append(d)
    return out


def _priority(d: Detection, confident: float) -> tuple[Any, ...]:
    return (d.recognizer not in STRONG_RECOGNIZERS, d.score < confident, -(d.end - d.start), -d.score)


def resolve_overlaps(dets: list[Detection], confident: float = 0.75) -> list[Detection]:
    ranked = sorted(dets, key=lambda d: _priority(d, confident))
    taken: list[Detection] = []
    starts: list[int] = []  # sorted, disjoint intervals taken so far
    ends: list[int] = []
    for d in ranked:
        i = bisect.bisect_left(ends, d.start + 1)  # first taken interval ending after d.start
        if i < len(starts) and starts[i] < d.end:
            continue
        starts.insert(i, d.start)
        ends.insert(i, d.end)
        taken.append(d)
    return sorted(taken, key=lambda d: d.start)


# ---------------------------------------------------------------------------------------------
# Mention propagation and native-script aliases
# ---------------------------------------------------------------------------------------------
_PROPAGATE_TYPES = ("PERSON", "ORG", "LOC", "CODE")


def coined_head(surface: str) -> str | None:
    """The first word of a name of several words when it is a coined word that names nothing else: no English
    word nor a name WordNet knows ("Kurdistan"), no place, no given name, no title ("Purion" of "Purion M",
    "Axcelis" of "Axcelis Technologies"; not "Ideal" of "Ideal Home", "Houston" of "Houston Methodist"). Said alone
    elsewhere in the document it names the same thing: in 185 earnings calls "we've sold more Purion" had stayed
    beside a masked "Purion M", and such words were what the attacker still recognised companies by."""
    words = _NAME_TOKEN.findall(surface)
    if len(words) < 2:
        return None
    head = words[0]
    if len(head) < 4 or not head[0].isupper() or not head.isalpha() or wordnet.is_common_word(head) \
            or wordnet.is_noun(head) or head.lower() in first_names() or head in TITLES or is_known_place(head) \
            or city_population(head) is not None or country_of(head):
        return None
    return head
_ALIAS_LABEL = re.compile(r"([A-Za-z][A-Za-z .-]{1,40}):\s*")
_PROSE_AFTER = re.compile(r"\s+(?:is|was|are|were|has|had|who|which|and|the|a|an)\s")


def _is_latin(ch: str) -> bool:
    return ch.isascii() or "\u00c0" <= ch <= "\u024f" or "\u1e00" <= ch <= "\u1eff"


def native_aliases(text: str, dets: list[Detection]) -> list[Detection]:
    """Names given in another script or as a pronunciation right after a person's name:
    "Yida Huang (simplified Chinese: 黄义达; pinyin: Huáng Yìdá; born ...)", "Yuji Unozawa (宇野沢 祐次, Unozawa
    Yuji, born ...)" -> PERSON mentions."""
    out = []
    for d in dets:
        if d.type != "PERSON" or text[d.end : d.end + 2] != " (":
            continue
        close = text.find(")", d.end + 2)
        inner_end = close if 0 < close - d.end < 300 else min(len(text), d.end + 300)
        pos = d.end + 2
        for segment in re.split(r"[;,]", text[pos:inner_end]):
            seg_start = pos
            pos += len(segment) + 1
            m = _ALIAS_LABEL.match(segment.lstrip())
            value_start = seg_start + (len(segment) - len(segment.lstrip())) + (m.end() if m else 0)
            value = text[value_start : seg_start + len(segment)].rstrip()
            prose = _PROSE_AFTER.search(value)
            if prose:  # an unclosed parenthesis: "(Hangul: 송기원 is a modern South Korean novelist, …"
                value = value[: prose.start()]
            if not value or value[:1].isdigit():
                continue
            non_latin = any(not _is_latin(c) for c in value if c.isalpha())
            if m:
                label = m.group(1).lower()
                if not (non_latin or "pronunciation" in label
                        or label in ("pinyin", "romanized", "romanised", "also spelled", "also known as")):
                    continue
            else:
                # unlabelled: the name in another script, or the same name in another order ("Unozawa Yuji")
                label = "unlabelled"
                same_words = sorted(value.lower().split()) == sorted(text[d.start:d.end].lower().split())
                if not ((non_latin and all(not c.isdigit() for c in value)) or same_words):
                    continue
            out.append(Detection(value_start, value_start + len(value), "PERSON", 0.8, "alias", f"alias:{label}",
                                 subtype="PERSON"))
    return out


def propagate_mentions(text: str, dets: list[Detection], known: dict[str, tuple[str, str | None]] | None = None,
                       min_len: int = 3) -> list[Detection]:
    """Other occurrences of names already detected in this document (NER often misses a sentence-initial
    surname or a name in an unusual context): every capitalised occurrence of a detected PERSON/ORG/LOC/CODE
    surface form, of a person's surname, and of the coined first word of an organisation's or a product's name
    (``coined_head``: "Purion" of "Purion M") becomes a mention too. ``known`` adds forms from earlier chunks of
    the document (surface -> (type, subtype))."""
    forms: dict[str, tuple[str, str | None]] = dict(known or {})
    for d in dets:
        if d.type in ("ORG", "MISC") and d.score >= 0.8 and (head := coined_head(text[d.start:d.end])):
            forms.setdefault(head, (d.type, d.subtype))
        if d.type not in _PROPAGATE_TYPES or d.score < 0.8:
            continue
        surface = text[d.start : d.end]
        if len(surface) >= min_len:
            forms.setdefault(surface, (d.type, d.subtype))
        if d.type == "PERSON":
            toks = [t for t in _NAME_TOKEN.findall(surface) if t.lower() not in ("mr", "mrs", "ms", "dr")]
            if len(toks) >= 2 and len(toks[-1]) >= min_len and toks[-1][0].isupper():
                forms.setdefault(toks[-1], ("PERSON", d.subtype))
    # a single word that also occurs in lower case in the document is a common word, not a name
    lowered = set(_LOWER_CASE_WORD.findall(text))
    forms = {f: v for f, v in forms.items() if " " in f or not f[:1].isupper() or f.lower() not in lowered}
    if not forms:
        return []
    occupied = sorted((d.start, d.end) for d in dets)
    starts = [s for s, _ in occupied]
    out = []
    for s, e, form in find_occurrences(text, forms, boundary="-"):
        if not text[s].isupper() and not text[s].isdigit():
            continue
        i = bisect.bisect_right(starts, e) - 1
        if any(os < e and s < oe for os, oe in occupied[max(0, i - 3) : i + 1]):
            continue
        typ, sub = forms[form]
        out.append(Detection(s, e, typ, 0.8, "propagation", "same_form", subtype=sub))
    return out


_LINE_PIECE_TRIM = " \t\r,.;:"
# a full stop with no space before the next sentence's first word ("between 1919 and 1958.Forbes was born", "Sony
# Taiwan.The label"): the tagger reads both as one token
_GLUED_SENTENCE = re.compile(r"(?<=[a-z0-9)])\.(?=[A-Z][a-z])")


# a placeholder an earlier redaction left in the text ("<UNK>", "[NAME]")
_REDACTION = re.compile(r"<[A-Z][A-Z0-9_]*>|\[[A-Z][A-Z0-9_]*\]")


def cut_at_placeholders(text: str, dets: list[Detection]) -> list[Detection]:
    """A detection never covers a placeholder an earlier redaction left: it keeps its pieces around the
    placeholders that hold a letter or digit ("Michael <UNK>" → "Michael"; "<UNK> <UNK>" → nothing). In earnings
    calls a name around "<UNK>" had put its "UNK" among the person's name words, which then became "<[Acronym]>"
    37 times in 185 calls."""
    if "<" not in text and "[" not in text:
        return dets
    out = []
    for d in dets:
        holes = [m.span() for m in _REDACTION.finditer(text, max(0, d.start - 12), d.end + 12)
                 if m.start() < d.end and d.start < m.end()]
        if not holes:
            out.append(d)
            continue
        cursor = d.start
        for a, b in holes + [(d.end, d.end)]:
            s, e = cursor, min(a, d.end)
            while s < e and not text[s].isalnum():
                s += 1
            while e > s and not text[e - 1].isalnum() and text[e - 1] not in ".)":
                e -= 1
            if e > s and any(ch.isalnum() for ch in text[s:e]):
                out.append(replace(d, start=s, end=e))
            cursor = max(cursor, b)
    return out


def cut_at_glued_sentences(text: str, dets: list[Detection]) -> list[Detection]:
    """A detection that runs over a full stop glued to the next sentence ends at the full stop: what follows is
    another sentence, which the tagger read into the span ("1958.Forbes" as one date kept the surname "Forbes" of a
    person masked everywhere else; mention propagation finds it once it stands alone)."""
    out = []
    for d in dets:
        m = _GLUED_SENTENCE.search(text, d.start, d.end)
        if m is None:
            out.append(d)
        elif any(ch.isalnum() for ch in text[d.start:m.start()]):
            out.append(replace(d, end=m.start()))
    return out


_NAME_TYPES = frozenset(("PERSON", "ORG", "LOC", "MISC"))


def split_at_line_breaks(text: str, dets: list[Detection]) -> list[Detection]:
    """No span crosses a line break: a detection over several lines becomes one detection per line piece
    that holds a letter or digit (trimmed of blanks and end punctuation). A consumer aligns released text to
    its input by line, and a replacement of a span that held a break would remove it.
    A name does not go on to the next line (no gold mention of the TAB train judgments or the biographies crosses a
    line break): of a name read across one, a later piece that is a single English word and no given name is the
    next line's first word, not a name ("Thank you, Andy\nGood morning": "Good" had become a pseudonym, and through
    the document's consistency every "Good" after it)."""
    out: list[Detection] = []
    for d in dets:
        if "\n" not in text[d.start:d.end]:
            out.append(d)
            continue
        start = d.start
        for i, piece in enumerate(text[d.start:d.end].split("\n")):
            s, e = start, start + len(piece)
            start = e + 1
            while s < e and text[s] in _LINE_PIECE_TRIM:
                s += 1
            while e > s and text[e - 1] in _LINE_PIECE_TRIM:
                e -= 1
            if not any(ch.isalnum() for ch in text[s:e]):
                continue
            word = text[s:e]
            if i and d.type in _NAME_TYPES and " " not in word and word.lower() not in first_names() \
                    and wordnet.is_common_word(word):
                continue
            out.append(replace(d, start=s, end=e))
    return out
