"""Release configuration (paper 000 eq. 2.4), category mapping and generalizers."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from anonstream import contracts
from anonstream.records import EntitySpan
from anonstream.generalization import Generalizer, build_generalizer, register_generalizer
from anonstream.swap.generalize import DateGeneralizer, LabelGeneralizer
from anonstream.swap.release import CATEGORIES, DEFAULT_RELEASE, Release, ReleaseInvalid, category_of

ROOT = Path(__file__).resolve().parents[2]


def test_shipped_default_yaml_is_the_builtin_default():
    shipped = yaml.safe_load((ROOT / "deploy" / "release.default.yaml").read_text())
    assert shipped == DEFAULT_RELEASE
    assert Release.from_yaml(ROOT / "deploy" / "release.default.yaml").version == Release.default().version


def test_schema_is_in_the_contract_registry_and_accepts_the_default():
    contracts.validate("release.v1.json", DEFAULT_RELEASE)


def test_default_release_decisions():
    r = Release.default()
    assert r.swapped == ("Organization", "Product", "Location", "Demographic")
    assert r.status("Person") == "U" and r.status("Event") == "G" and r.status("Date") == "G"
    assert r.status("Quantity") == "G" and r.status("Misc") == "G" and r.status("Code") == "U"
    assert (r.scope, r.protect) == ("masked", "all")
    # no bare category placeholder in the default release: every G/S category has a readable generalizer for a
    # value of known kind; only a name of no known kind is suppressed ("[Name]"), since any noun may be false
    for category, kind in (("Event", "event"), ("Product", "product"), ("Demographic", "occupation"),
                           ("Quantity", "count"), ("Misc", "work")):
        assert not r.generalizer(category).generalize("Xyzzy Qwert", category, kind).startswith("[")
    for category in ("Organization", "Location", "Misc"):
        assert r.generalizer(category).generalize("Xyzzy Qwert", category) == "[Name]"
    assert r.generalizer("Organization").generalize("Xyzzy Bank", "Organization") == "the bank"
    assert r.to_echo() == {"schema": "release.v1", "name": "default", "version": r.version}


def test_version_is_a_content_hash_of_the_normalized_release():
    base = copy.deepcopy(DEFAULT_RELEASE)
    same = copy.deepcopy(base)
    del same["categories"]["Code"]  # an absent extra category defaults to U
    del same["scope"]  # default filled in
    del same["pool"]["ttl_seconds"]  # default filled in
    assert Release.from_dict(same).version == Release.from_dict(base).version
    changed = copy.deepcopy(base)
    changed["swap_rate"] = 0.2
    assert Release.from_dict(changed).version != Release.from_dict(base).version


@pytest.mark.parametrize("mutate, where", [
    (lambda d: d.pop("swap_rate"), "required"),
    (lambda d: d.update(swap_rate=1.5), "maximum"),
    (lambda d: d["categories"].pop("Event"), "required"),
    (lambda d: d["categories"].update(Weather={"status": "S"}), r"categories: enum"),
    (lambda d: d["categories"]["Date"].update(status="X"), "enum"),
    (lambda d: d.update(fallback="drop"), "enum"),
    (lambda d: d["pool"].update(max_size=0), "minimum"),
    (lambda d: d.update(extra=1), "additionalProperties"),
])
def test_invalid_releases_are_rejected_by_place_and_rule(mutate, where):
    obj = copy.deepcopy(DEFAULT_RELEASE)
    mutate(obj)
    with pytest.raises(ReleaseInvalid, match=where):
        Release.from_dict(obj)


def test_unknown_generalizer_is_rejected():
    obj = copy.deepcopy(DEFAULT_RELEASE)
    obj["categories"]["Location"] = {"status": "G", "generalizer": {"name": "nope"}}
    with pytest.raises(ReleaseInvalid, match="generalizer"):
        Release.from_dict(obj)


def test_generalizers_are_pluggable():
    class Country(Generalizer):
        name = "country"

        def __init__(self, table):
            self.table = table

        def generalize(self, value, category):
            return self.table.get(value, f"[{category}]")

    register_generalizer("country", Country)
    obj = copy.deepcopy(DEFAULT_RELEASE)
    obj["categories"]["Location"] = {"status": "G", "generalizer": {"name": "country", "table": {"Paris": "France"}}}
    r = Release.from_dict(obj)
    assert r.generalizer("Location").generalize("Paris", "Location") == "France"


@pytest.mark.parametrize("subtype, etype, category", [
    ("ORG", "ORG", "Organization"), (None, "ORG", "Organization"), ("GPE", "LOC", "Location"),
    ("FAC", "LOC", "Location"), ("EVENT", "MISC", "Event"), ("PRODUCT", "MISC", "Product"),
    ("DATE", "DATETIME", "Date"), (None, "DATETIME", "Date"), ("NORP", "DEM", "Demographic"),
    ("MONEY", "QUANTITY", "Quantity"), ("EMAIL", "CODE", "Code"), ("LAW", "MISC", "Misc"),
    (None, "MISC", "Misc"), ("SOMETHING_NEW", "PERSON", "Person"),
])
def test_category_mapping(subtype, etype, category):
    assert category_of(EntitySpan(0, 1, etype, "QUASI", "e", "x", subtype=subtype)) == category
    assert category in CATEGORIES


@pytest.mark.parametrize("value, month, year", [
    ("31 August 2006", "August 2006", "2006"),
    ("August 31, 2006", "August 2006", "2006"),
    ("2006-08-31", "August 2006", "2006"),
    ("31.08.2006", "August 2006", "2006"),
    ("Monday, 3rd of March 2001", "March 2001", "2001"),
    ("between 15 December 2002 and 3 January 2003", "between December 2002 and January 2003",
     "between 2002 and 2003"),
    ("late March 2001", "late March 2001", "2001"),  # late March is in 2001, not in "late 2001"
    ("August 2006", "August 2006", "2006"),
    ("2006", "2006", "2006"),
    ("on 5 May", "on May", "on [Date]"),
    ("the following day", "the following day", "the following day"),
    ("18 years", "18 years", "18 years"),
])
def test_date_generalizer(value, month, year):
    assert DateGeneralizer("month").generalize(value, "Date") == month
    assert DateGeneralizer("year").generalize(value, "Date") == year


def test_label_generalizer():
    assert LabelGeneralizer().generalize("Siemens", "Organization") == "[Organization]"
    assert LabelGeneralizer("a company").generalize("Siemens", "Organization") == "a company"


@pytest.mark.parametrize("value, country, continent", [
    ("Gdańsk", "Poland", "Europe"),
    ("Gdańsk, Poland", "Poland", "Europe"),
    ("Texas", "the United States", "North America"),  # a US state
    ("Chicago, Illinois", "the United States", "North America"),
    ("Amsterdam", "the Netherlands", "Europe"),  # GeoNames says "The Netherlands"
    ("Poland", "Europe", "Europe"),  # a country goes one step up
    ("the Kingdom of Atlantis and Lemuria", "[Name]", "[Name]"),
])
def test_place_generalizer(value, country, continent):
    assert build_generalizer({"name": "place"}).generalize(value, "Location") == country
    assert build_generalizer({"name": "place", "level": "continent"}).generalize(value, "Location") == continent


@pytest.mark.parametrize("before, expected", [
    ("stores in coastal ", "United States"),  # the modifier is the article: "coastal United States"
    ("in rural ", "United States"),
    ("in southern ", "the United States"),  # a direction is not true of the container: no "southern United States"
    ("in ", "the United States"),
])
def test_a_modifier_before_a_place_takes_the_place_of_the_containers_article(before, expected):
    place = build_generalizer({"name": "place"})
    assert place.in_context(before, "Texas", place.generalize("Texas", "Location", "state", "US")) == expected


def test_a_place_the_gazetteer_cannot_place_gets_a_neutral_noun_never_the_documents_country():
    """"lives in Zakroczym" (too small for GeoNames' 15,000+) must not become "lives in Poland" on the document's
    word alone: that is how "Columbia Sportswear" became "Japan" and "Transocean" "Brazil"."""
    place = build_generalizer({"name": "place"})
    assert place.generalize("Zakroczym", "Location", "place", "PL") == "[Name]"  # no gazetteer says it is a place
    assert place.generalize("Columbia Sportswear", "Location", "place", "JP") == "[Name]"
    assert place.generalize("the Middle East", "Location", "area", "BR") == "the area"  # a region is an area
    assert place.generalize("Gdańsk", "Location", "city", "TR") == "Poland"  # its own country first
    assert place.generalize("Kartal Prison", "Location", "prison", "TR") == "the prison"  # says more than Turkey


@pytest.mark.parametrize("value, kind, country, expected", [
    ("the Western United States", "area", "SG", "the United States"),  # a part of a country: the country
    ("the North Central States", "area", "SG", "the area"),  # no place GeoNames knows: never Singapore
    ("Hassalo in Portland", "place", "JP", "the United States"),  # the known place it lies in, not Japan
    ("Idaho", "region", "US", "the United States"),  # a US state
    ("Oregon", "region", "CA", "the United States"),
    ("Lincoln", "city", "GB", "the United Kingdom"),  # GeoNames has a Lincoln in the document's country
    ("Lincoln", "city", "US", "the United States"),
    ("Lincoln", "city", None, "a city"),  # two Lincolns of a size: no country is confirmed
    ("Washington, Tyne and Wear", "city", "GB", "the United Kingdom"),  # the English town before the US state
    ("Northern Ireland", "area", "GB", "the area"),  # a name, not "the northern part of Ireland"
    ("the Gulf of Mexico", "facility", "US", "the facility"),  # "of" says nothing of containment
    ("the Middle East", "area", "BR", "the area"),
])
def test_a_place_generalizes_only_along_a_containment_geonames_confirms(value, kind, country, expected):
    assert build_generalizer({"name": "place"}).generalize(value, "Location", kind, country) == expected


@pytest.mark.parametrize("value, country, expected", [
    ("Denver, Leeds, Qatar, Singapore", "US", "several places"),  # a list, not "Denver, its container Singapore"
    ("Boise, Memphis", "GB", "the United States"),  # every one confirmed in the United States
    ("Boise and Memphis", None, "the United States"),
    ("Norway and Sweden", None, "Europe"),  # two countries: the continent both are in
    ("Hamburg, Germany", "DE", "Germany"),  # a place and its container: the container
    ("Tulsa, Oklahoma", "US", "the United States"),  # a city of that name in that state
])
def test_a_list_of_places_goes_to_what_contains_every_one(value, country, expected):
    assert build_generalizer({"name": "place"}).generalize(value, "Location", "city", country) == expected


@pytest.mark.parametrize("before, expected", [
    ("Currently living in Austria, ", "a city"),  # "Austria, Austria" said nothing and read broken
    ("She moved to ", "Austria"),
    ("the Republic of ", "[Name]"),  # after the kind of place it is: not "the Republic of Austria"
    ("lives on the island of ", "[Name]"),  # not "the island of the area"
])
def test_a_place_after_its_container_becomes_a_neutral_noun(before, expected):
    gen = build_generalizer({"name": "place"})
    assert gen.in_context(before, "Vienna", gen.generalize("Vienna", "Location", "city", "AT")) == expected


def test_a_place_without_a_partner_is_generalized_in_its_context():
    """The fallback of a swapped category reads the words before the value too (a release's first chunk never has
    a partner)."""
    from anonstream.swap.pairing import Releaser
    from anonstream.swap.testing import make_chunk
    from anonstream.swap.tuples import analyze

    release = Release.from_dict(DEFAULT_RELEASE)
    chunk = make_chunk("d1", 0, "Currently living in Austria, {LOC/GPE#city:Vienna}. Born in {LOC/GPE#city:Vienna}.")
    released, _ = Releaser(release).finalize(chunk, analyze(chunk, release), fallback="generalize")
    assert released.text.startswith("Currently living in Austria, a city.")


@pytest.mark.parametrize("value, kind, expected", [
    ("Gdańsk Regional Court", None, "the regional court"),
    ("the Diyarbakır State Security Court", None, "the state security court"),
    ("University of Warsaw", None, "the university"),
    ("BG Bank A/S", None, "the bank"),
    ("Danish Refugee Council", None, "the council"),  # "Danish" is a WordNet pastry, not a kind of organisation
    ("Rights and Freedoms Party", "party", "the party"),  # "freedoms" names it, it is no kind of party
    ("Siemens", "company", "the company"),  # no kind in the name: the entity's kind (pii/kinds.py)
    ("Goldman Sachs", None, "[Name]"),  # no kind known: suppressed, never a noun that may be false
    ("Indictment Division", None, "the indictment division"),  # a court's division (Geneva)
    ("EBITDA", "measure", "the measure"),  # typed ORG, but no organisation
    ("Airbus A350", "product", "the product"),
    ("the Defense Segment", "segment", "the segment"),
    ("Q4", "period", "the period"),
    ("Leanne", "person", "the person"),
    ("ASU", "acronym", "[Acronym]"),  # an organisation, a measure or a standard: nothing says which
    ("PKK", "acronym", "[Acronym]"),
    ("CEO", "position", "executive"),  # an office typed ORG: the office one step up, never "the organisation"
])
def test_kind_generalizer(value, kind, expected):
    assert build_generalizer({"name": "kind"}).generalize(value, "Organization", kind) == expected


@pytest.mark.parametrize("value, kind, expected", [
    ("DKK 9,890,000", "money", "DKK 5-10 million"),
    ("approximately 1,300,000 euros (EUR)", "money", "1-2 million euros (EUR)"),
    ("EUR 5,000", "money", "EUR 5,000-10,000"),
    ("9.890.000 zlotys", "money", "5-10 million zlotys"),
    ("two billion Danish kroner", "money", "2-5 billion Danish kroner"),
    ("one thousand six hundred companies", "count", "1,000-2,000 companies"),
    ("42", "age", "40-50"),
    ("35%", "percent", "30-40%"),
    ("five co-accused", "count", "several co-accused"),
    ("TRL 136,890,0000", "money", "TRL 1-2 billion"),
    ("743,859,795 Turkish liras (TRL)", "money", "500-1,000 million Turkish liras (TRL)"),
    ("twenty metres", "distance", "20-30 metres"),
    ("the whole amount", "money", "the whole amount"),  # no number: nothing precise to hide
    ("over a dozen catastrophe-designated storms", "count", "over a dozen catastrophe-designated storms"),
])
def test_range_generalizer(value, kind, expected):
    out = build_generalizer({"name": "range"}).generalize(value, "Quantity", kind)
    assert out == expected


@pytest.mark.parametrize("value, kind, expected", [
    ("Danish", "nationality", "European"),
    ("Turkish", "nationality", "Asian"),  # GeoNames puts Turkey in Asia
    ("teacher", "occupation", "educator"),
    ("founder", "occupation", "originator"),
    ("forester", "occupation", "farmer"),  # a kind of person, not the novelist C. S. Forester (WordNet's instance)  # the person sense, not the horse disease WordNet lists first
    ("Muslim", "religion", "religious"),
    ("Kurdish", "nationality", "ethnic"),  # no country of its own: the fallback
    ("English", "nationality", "European"),  # a people of part of one country ("an English footballer")
    ("Mayor of the Dominowo Commune", "position", "mayor"),  # the office, not the commune
    ("Vice President", "position", "official"),  # a vice president is no president
    ("Deputy Mayor", "position", "official"),
    ("advocate", "occupation", "professional"),  # WordNet's hypernym is "person", the root: "was a person" said nothing
    ("Prime Minister", "position", "minister"),
    ("vice-president", "position", "official"),  # already bare: one step up
    ("German", "language", "a European language"),
    ("Kurdish", "language", "a language"),  # no country of its own ("had spoken in ethnic" before)
    ("Hebrew", "language", "a language"),  # "a minority language" was false
    ("Chinese", "language", "an Asian language"),
    ("French", "nationality", "European"),  # France, not Saint Pierre and Miquelon (North America), whose demonym too
    ("Southern", "group", "[Name]"),  # no nationality any source confirms: suppressed, not "ethnic" nor "the group"
    ("Saudi", "group", "[Name]"),  # "building in Saudi": the country said colloquially, no people
    ("Saudi", "nationality", "Asian"),  # WordNet's adjective of Saudi Arabia ("the Saudi royal family")
    ("Argentine", "nationality", "South American"),
    ("Chief Financial Officer", "position", "executive"),  # a role in a business: WordNet's, never another office
    ("part owner", "position", "owner"),
    ("shareholder", "position", "investor"),
    ("investor", "position", "capitalist"),  # already the bare role: one WordNet step up, never "an investor"
    ("a manager", "position", "an administrator"),  # the value's article follows the new noun ("an a manager" was)
    ("analyst", "position", "expert"),  # no business role known: WordNet, never the false "official"
])
def test_demographic_generalizer(value, kind, expected):
    assert build_generalizer({"name": "demographic"}).generalize(value, "Demographic", kind) == expected


@pytest.mark.parametrize("value, kind, expected", [
    ("the Marmara earthquake", None, "the earthquake"),
    ("Young Communist Union", None, "the union"),
    ("Expo 2000", None, "the expo"),
    ("Yüksel İğdeli", None, "[Name]"),  # no common noun to stand on: suppressed, not called "the matter"
    ("Class A", "misc", "[Name]"),
    ("Bad Dreams", "work", "the work"),  # a title is not built on its last word
    ("Labor Day", "event", "the event"),
    ("Total Recall", "misc", "[Name]"),  # a capitalized last word that names no kind is a title's word
    ("Melrose Place", None, "[Name]"),
    ("Buffalo Bills", "misc", "[Name]"),
    ("Mediterranean Games", "event", "the games"),  # ... one WordNet files as a group, an act, an event is the kind
    ("Hugo Award for Best Novel", "misc", "the award"),  # the head comes before its post-modifier, not "the novel"
    ("a Fangoria Chainsaw Award for Best Supporting Actress", "misc", "the award"),
    ("Edinburgh Fringe Festival of 2019", "event", "the festival"),
    ("Widow's Bereavement Allowance", "work", "the allowance"),  # a benefit the tagger calls a work
    ("Wrecking Ball", "work", "the work"),
])
def test_phrase_generalizer(value, kind, expected):
    assert build_generalizer({"name": "phrase"}).generalize(value, "Misc", kind) == expected


@pytest.mark.parametrize("before, value, expected", [
    ("the theme song for the movie ", "Stealth", "[Title]"),  # not "the movie work"
    ('with his song "', "Home", "[Title]"),
    ("an album entitled ", "Rockets Over Sweden", "[Title]"),
    ("directed films such as ", "Hamlet 2", "[Title]"),
    ("Skinner (1993), ", "Virtuosity", "[Title]"),  # a list of works: not "the work (the 1990s), the work ..."
    ("Barefoot, and ", "Ideal Home", "[Title]"),
    ("He starred in ", "Titanic", "the work"),  # in running text the neutral noun reads
])
def test_a_work_named_where_the_text_says_it_is_one_reads_as_a_title(before, value, expected):
    gen = build_generalizer({"name": "phrase"})
    assert gen.in_context(before, value, gen.generalize(value, "Misc", "work")) == expected


def test_unknown_place_level_is_rejected():
    with pytest.raises(ValueError, match="level"):
        build_generalizer({"name": "place", "level": "street"})


@pytest.mark.parametrize("value, expected", [
    ("MRT", "the area"),  # Mauritania's code, but in running text a test or a product: no containment confirmed
    ("SA", "the area"),
    ("US", "North America"),  # a code that stands for its country in running text
    ("UK", "Europe"),
])
def test_a_country_code_is_a_country_only_where_text_uses_it_so(value, expected):
    assert build_generalizer({"name": "place"}).generalize(value, "Location", "area") == expected
