"""The annotators' evidence behind the pii policy's defaults (``shared/anonstream/pii/policy.py``, ``RulePolicy``).

For each rule that releases a kind of mention as written, how the gold annotators of TAB train (every annotator of
a document) and of the Wikipedia biographies (one annotator each) decided such mentions. Mentions of one place in
a document that overlap are one group (``evaluation.release`` does the same for the agreement scores): agreed
QUASI = every annotator of the document masked it, agreed NO_MASK = none did, disputed = the rest, DIRECT = any
annotator called it a direct identifier.

1. Names reduced to initials (``initials_no_mask``, on by default): PERSON groups whose shortest form is one to
   three capital letters after at most a title ("X", "Z. L.", "Mr M.").
2. A city as a place by its GeoNames population (``large_place_no_mask``, off by default): LOC groups whose
   shortest form is a city.
3. Institutions named after a city by its population (``large_city_population`` of ``large_city_no_mask``):
   ORG mentions naming a court, office, prosecutor … whose first word is a city.
4. A nationality and its country named in the same document (``demonym_follows_country``, on by default): each
   annotator's DEM mentions of a country's nationality, against that annotator's most frequent label of the
   country's own mentions (LOC or ORG) in the document, and the nationalities whose country the document does not
   name.

    .venv/bin/python benchmarks/bench_policy_evidence.py
"""
from __future__ import annotations

import re
import sys
from collections import Counter

import common

DATA = common.REPO.parent / "shared" / "data"
CORPORA = {"TAB train (100 documents)": DATA / "tab" / "echr_train_first100.json",
           "biographies (100)": DATA / "wikibio" / "wiki_test.json"}
DECISIONS = ("agreed QUASI", "agreed NO_MASK", "disputed", "DIRECT")
POPULATION_BUCKETS = ((1_000_000, "≥ 1M"), (300_000, "300k–1M"), (100_000, "100k–300k"), (0, "< 100k"))
INSTITUTION = re.compile(r"Court|Office|Prosecutor|Council|Commission|Governor|Municipality|Police|Prison|Centre")


def population_bucket(population: int | None) -> str | None:
    if population is None:
        return None
    return next(label for floor, label in POPULATION_BUCKETS if population >= floor)


def groups(doc):
    """(decision, shortest form, gold types) of every group of overlapping mentions on one line."""
    from anonstream.evaluation.release import _line_starts, _locate, _overlapping_groups

    starts, annotators, single = _line_starts(doc.text), set(doc.annotations), []
    for name, mentions in doc.annotations.items():
        for m in mentions:
            line = _locate(starts, m.start)
            if line == _locate(starts, m.end - 1):
                single.append((line, m.start, m.end, name, m))
    for group in _overlapping_groups(single):
        mentions = [m for *_, m in group]
        masked_by = {name for *_, name, m in group if m.identifier_type in ("DIRECT", "QUASI")}
        if any(m.identifier_type == "DIRECT" for m in mentions):
            decision = "DIRECT"
        elif masked_by == annotators:
            decision = "agreed QUASI"
        elif not masked_by:
            decision = "agreed NO_MASK"
        else:
            decision = "disputed"
        yield decision, min((m.span_text for m in mentions), key=len), {m.entity_type for m in mentions}


def nationality_pairs(mentions) -> Counter:
    """(nationality's label, its country's most frequent label or "not named") over one annotator's mentions."""
    from anonstream.pii.policy import country_of

    countries: dict[str, Counter] = {}
    for m in mentions:
        iso = country_of(m.span_text)
        if iso and m.entity_type in ("LOC", "ORG"):
            countries.setdefault(iso, Counter())[m.identifier_type] += 1
    out = Counter()
    for m in mentions:
        iso = country_of(m.span_text) if m.entity_type == "DEM" else None
        if iso:
            country = countries.get(iso)
            out[(m.identifier_type, country.most_common(1)[0][0] if country else "not named")] += 1
    return out


def main() -> None:
    common.arg_parser(__doc__).parse_args()
    from anonstream.evaluation.tab import load_tab
    from anonstream.pii.gazetteer import city_population
    from anonstream.pii.policy import is_initials

    results = common.Results("policy_evidence", "What the annotators decided, behind the pii policy's defaults")
    initials: dict[str, Counter] = {}
    places: dict[tuple[str, str], Counter] = {}
    institutions: dict[tuple[str, str], Counter] = {}
    nationalities: dict[str, Counter] = {}
    for corpus, path in CORPORA.items():
        initials[corpus] = Counter()
        for doc in load_tab(path):
            for decision, form, types in groups(doc):
                if "PERSON" in types and is_initials(form.strip()):
                    initials[corpus][decision] += 1
                bucket = population_bucket(city_population(form.strip()))
                if "LOC" in types and bucket:
                    places.setdefault((corpus, bucket), Counter())[decision] += 1
            for mentions in doc.annotations.values():
                for m in mentions:
                    if m.entity_type == "ORG" and INSTITUTION.search(m.span_text):
                        bucket = population_bucket(city_population(m.span_text.split()[0]))
                        if bucket:
                            institutions.setdefault((corpus, bucket), Counter())[m.identifier_type] += 1
            for mentions in doc.annotations.values():
                nationalities.setdefault(corpus, Counter()).update(nationality_pairs(mentions))

    def row(label, counts):
        return [label, *(counts.get(d, 0) for d in DECISIONS)]

    results.section("Names reduced to initials (`initials_no_mask`, on by default)", common.table(
        ["corpus", *DECISIONS], [row(c, initials[c]) for c in CORPORA]))
    results.section("Cities as places, by population (`large_place_no_mask`, off by default)", common.table(
        ["corpus", "population", *DECISIONS],
        [[c, b, *(places.get((c, b), Counter()).get(d, 0) for d in DECISIONS)]
         for c in CORPORA for _, b in POPULATION_BUCKETS]))
    results.section("Institutions named after a city, by its population (`large_city_population`; every "
                    "annotator's mentions)", common.table(
        ["corpus", "population", "mentions", "NO_MASK", "NO_MASK share"],
        [[c, b, sum(n.values()), n["NO_MASK"], f"{n['NO_MASK'] / sum(n.values()):.0%}" if n else "–"]
         for c in CORPORA for _, b in POPULATION_BUCKETS for n in [institutions.get((c, b), Counter())]]))
    pairs = sorted({key for counts in nationalities.values() for key in counts})
    results.section("A nationality and its country in the same document (`demonym_follows_country`; every "
                    "annotator's mentions)", common.table(
        ["corpus", *(f"{dem} / {country}" for dem, country in pairs), "same label"],
        [[c, *(nationalities[c][k] for k in pairs),
          f"{sum(n for (d, k), n in nationalities[c].items() if d == k)} of "
          f"{sum(n for (d, k), n in nationalities[c].items() if k != 'not named')}"] for c in CORPORA]))
    results.write()


if __name__ == "__main__":
    sys.exit(main())
