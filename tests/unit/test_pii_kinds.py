"""Entity kinds (pii/kinds.py) and spans that never cross a line break (pii/merge.py)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonstream.pii.base import Detection
from anonstream.pii.kinds import assign_countries, kind_of, settle_unconfirmed_places
from anonstream.records import EntitySpan
from anonstream.pii.merge import split_at_line_breaks


@pytest.mark.parametrize("entity_type, subtype, surface, before, kind", [
    ("ORG", None, "Court of Cassation", "", "court"),
    ("ORG", None, "Słupsk Regional Court", "", "court"),
    ("ORG", None, "Tekirdağ F-type Prison", "", "prison"),
    ("ORG", None, "Słupsk Detention Centre", "", "prison"),
    ("ORG", None, "Ankara Security Directorate", "", "police"),
    ("ORG", None, "Ministry of Justice", "", "ministry"),
    ("ORG", None, "Turkish Revolutionary Communist Party", "", "party"),
    ("ORG", None, "BG Bank A/S", "", "company"),  # the legal form says company
    ("ORG", None, "Kars State Hospital", "", "hospital"),
    ("ORG", None, "Siemens", "", "organization"),
    ("ORG", None, "Canton of Geneva Assize Court", "", "court"),  # the head before "of" is no kind, the last word is
    ("ORG", None, "Kumkapı Removal Centre", "", "prison"),  # immigration detention, not a municipality's centre
    ("ORG", None, "Polish-German Reconciliation Foundation", "", "foundation"),
    ("ORG", None, "Danish Confederation of Trade Unions", "", "union"),  # not a foundation's place
    ("ORG", None, "Christian Democratic Association", "", "association"),
    ("ORG", None, "PKK", "", "acronym"),  # an unknown kind: generalized, never into a full name's place
    ("ORG", "ORG", "Q4", "", "period"),  # business text: what the tagger typed ORG is often no organisation
    ("MISC", "PRODUCT", "Q2", "", "period"),
    ("ORG", "ORG", "FY17", "", "period"),
    ("MISC", "PRODUCT", "Q3 and Q4", "", "period"),  # a list of periods: a period, not a model number ("A350")
    ("ORG", "ORG", "FY15, FY16", "", "period"),
    ("DATETIME", "DATE", "Q2 through Q4", "", "period"),
    ("MISC", "PRODUCT", "Q7 and A8", "", "product"),  # no fiscal period: the digit says a model
    ("ORG", "ORG", "EBITDA", "", "measure"),  # WordNet: income
    ("ORG", "ORG", "FFO", "", "acronym"),  # WordNet does not know it, and no amount follows
    ("MISC", "EVENT", "Defense Segment", "", "segment"),
    ("ORG", "ORG", "Airbus A350", "", "product"),  # a model designation
    ("MISC", "PRODUCT", "737", "", "product"),
    ("MISC", None, "Hannover 96", "", "misc"),  # a place's name and a number: a club, no model number
    ("MISC", None, "Michigan's 5th", "", "misc"),  # a congressional district
    ("MISC", "EVENT", "Ebola", "", "disease"),  # WordNet: viral infection
    ("ORG", "ORG", "HIV", "", "disease"),  # WordNet spells it in capitals
    ("ORG", "ORG", "PIP", "", "acronym"),  # not "pip", the poultry disease WordNet spells in lower case
    ("ORG", "ORG", "Lilly", "", "organization"),  # a lone first name typed ORG: in business text a company
    ("ORG", "ORG", "Lincoln", "", "organization"),  # a first name, but a city too
    ("DEM", "OCCUPATION", "Chief Financial Officer", "", "position"),  # WordNet: corporate executive
    ("DEM", "OCCUPATION", "part owner", "", "position"),
    ("DEM", "OCCUPATION", "investor", "", "position"),
    ("DEM", "OCCUPATION", "prison officer", "", "occupation"),  # a trade: still swapped
    ("DATETIME", "DATE", "the second quarter of 2016", "", "period"),
    ("DATETIME", "DATE", "fiscal 2017", "", "period"),
    ("DATETIME", "DATE", "31 August 2006", "", "date"),
    ("LOC", "LOC", "the North Central States", "", "area"),  # no gazetteer places it: generalized, never swapped
    ("ORG", None, "DHKP-C", "", "acronym"),
    ("ORG", None, "Indictment Division", "", "organization"),
    ("ORG", None, "Canton of Geneva Court of Cassation", "", "court"),  # a later part of the name says court
    ("ORG", None, "Principal Public Prosecutor of the Canton of Geneva", "", "prosecutor"),
    ("ORG", None, "Istanbul Anti-Terrorist Branch", "", "police"),
    ("ORG", None, "Regional Branch", "", "authority"),
    ("LOC", "GPE", "Canton of Geneva", "", "region"),  # "<region word> of X" is a region
    ("LOC", "GPE", "District of Kyrenia", "", "region"),
    ("LOC", "GPE", "Kalogrea", "", "place"),
    ("LOC", "LOC", "Kalogrea Village", "", "village"),  # a settlement, not a region
    ("LOC", "GPE", "the Providence Grays", "", "team"),  # a city's name and a plural naming no place
    ("LOC", "FAC", "the Rockford Peaches", "", "team"),
    ("LOC", "GPE", "Colorado Springs", "", "city"),  # a city itself
    ("LOC", "GPE", "Niagara Falls", "", "city"),
    ("LOC", "GPE", "Zurich", "the prosecution authority of the canton of ", "region"),  # a canton, not a city
    ("LOC", "GPE", "Turkey", "", "country"),
    ("LOC", "GPE", "the Netherlands", "", "country"),
    ("LOC", "GPE", "Łódź", "", "city"),
    ("LOC", "GPE", "Gdańsk, Poland", "", "city"),
    ("LOC", "GPE", "Texas", "", "state"),  # a US state: swapped only with a state
    ("LOC", "LOC", "Asia Pacific region", "", "region"),
    ("LOC", "FAC", "Clarendon Boulevard", "", "street"),
    ("LOC", "LOC", "Roadhouse", "", "area"),  # a restaurant chain the tagger placed: no road in it
    ("LOC", "LOC", "Atatürk Cad.", "", "street"),
    ("LOC", "FAC", "Atatürk Airport", "", "facility"),
    ("LOC", "GPE", "Dominowo District (Naczelnik Gminy)", "", "region"),  # the gloss does not count
    ("DEM", "NORP", "Danish", "", "nationality"),
    ("DEM", "NORP", "Muslim", "", "religion"),
    ("DEM", "OCCUPATION", "teacher", "", "occupation"),
    ("DEM", "OCCUPATION", "Mayor of the Dominowo Commune", "the ", "position"),
    ("DEM", "OCCUPATION", "district leader", "as the ", "position"),
    ("DEM", "OCCUPATION", "primary school teacher", "post of ", "occupation"),
    ("DEM", "NORP", "Kurdish", "had spoken in ", "language"),
    ("DEM", "NORP", "Kurdish", "to solve the ", "nationality"),
    ("QUANTITY", "MONEY", "EUR 5,000", "", "money"),
    ("QUANTITY", None, "42", "he was aged ", "age"),
    ("QUANTITY", None, "35%", "", "percent"),
    ("QUANTITY", None, "five co-accused", "", "count"),
    ("DATETIME", "DATE", "31 August 2006", "", "date"),
    ("MISC", "EVENT", "Expo 2000", "", "event"),
    ("ORG", "ORG", "CEO", "our ", "position"),  # an office the tagger typed as an organisation
    ("ORG", "ORG", "Prime Minister", "the ", "position"),
    ("MISC", "PRODUCT", "CFO of Amphastar", "the ", "position"),  # a role of its company, typed as a product
    ("ORG", "ORG", "Company's CEO", "the ", "position"),  # its owner's role: "the [Name]" had hidden the office
    ("ORG", "ORG", "Bank of America", "", "bank"),
    ("ORG", "ORG", "Board of Directors", "the ", "authority"),  # a body, not a person's office
    ("DATETIME", "DATE", "2H16", "", "period"),
])
def test_kind_of(entity_type, subtype, surface, before, kind):
    assert kind_of(entity_type, subtype, surface, before) == kind


@pytest.mark.parametrize("surface, after, kind", [
    ("FFO", " of $0.41 per share", "measure"),  # an acronym an amount follows at once
    ("CRS", ", and about $4", "acronym"),  # an amount later in the clause says nothing
    ("PKK", " on 13 February ", "acronym"),  # a date is no amount
    ("EPD", " segment reported", "segment"),
    ("Aerospace & Electronics", " segment's margin", "segment"),
])
def test_the_words_after_a_name_tell_a_measure_or_a_segment(surface, after, kind):
    assert kind_of("ORG", "ORG", surface, "", after) == kind


def test_a_detection_over_a_line_break_becomes_one_per_line():
    text = "our P&L.\nFood and beverage grew"
    det = Detection(4, len(text), "ORG", 0.8, "ner", "ner:ORG", subtype="ORG")
    pieces = split_at_line_breaks(text, [det])
    assert [text[d.start:d.end] for d in pieces] == ["P&L", "Food and beverage grew"]
    assert all(d.type == "ORG" for d in pieces)
    assert split_at_line_breaks("a.\n\nb", [Detection(1, 3, "ORG", 0.8, "ner", "")]) == []  # only punctuation


@pytest.mark.parametrize("text, kept", [
    ("Thank you, Andy\nGood morning", ["Andy"]),  # the next line's first word is no name
    ("Thank you, Andy\nJohn, go ahead", ["Andy", "John"]),  # a given name that is also a word stays
    ("Thank you, Andy\nKowalczyk", ["Andy", "Kowalczyk"]),  # no English word: it may be a name
    ("Good\nmorning", ["Good"]),  # the first piece is never dropped
])
def test_a_name_does_not_go_on_to_the_next_line(text, kept):
    second = text.index("\n") + 1  # the tagger's span ends with the next line's first word
    end = second + len(text[second:].replace(",", " ").split()[0])
    det = Detection(text.index(kept[0]), end, "PERSON", 0.85, "ner", "ner:PERSON", subtype="PERSON")
    assert [text[d.start:d.end] for d in split_at_line_breaks(text, [det])] == kept


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab \n.,", min_size=1, max_size=40), st.data())
def test_no_piece_crosses_a_line_break(text, data):
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    for d in split_at_line_breaks(text, [Detection(start, end, "MISC", 0.5, "t", "")]):
        assert "\n" not in text[d.start:d.end] and start <= d.start < d.end <= end


def _span(entity_type: str, text: str, kind: str | None = None) -> EntitySpan:
    return EntitySpan(0, len(text), entity_type, "QUASI", text, text, kind=kind)


def test_a_name_read_as_an_unknown_place_and_as_an_organisation_is_the_organisation():
    spans = [_span("ORG", "Lantern", "organization"), _span("LOC", "Lantern", "place"),  # a company the tagger
             _span("LOC", "Lantern", "city"), _span("LOC", "Harbor", "area")]  # also read as a place
    spans[0].entity_id = "e1"
    settle_unconfirmed_places(spans)
    assert [(s.type, s.kind, s.entity_id) for s in spans] == [
        ("ORG", "organization", "e1"), ("ORG", "organization", "e1"),
        ("LOC", "city", "Lantern"), ("LOC", "area", "Harbor")]  # a confirmed city stays; no organisation named so


def test_places_and_organisations_get_their_country_countries_none():
    spans = [_span("LOC", "the Republic of Turkey", "country"), _span("LOC", "Malatya", "city"),
             _span("LOC", "Kraków", "city"), _span("ORG", "İnönü University", "school"),
             _span("LOC", "District of Famagusta", "region"), _span("DEM", "Turkish", "nationality"),
             _span("DATETIME", "May 2001", "date")]
    assign_countries(spans, "TR")
    assert [s.country for s in spans] == [None, "TR", "PL", "TR", "TR", None, None]


@pytest.mark.parametrize("before, after, kind", [
    ("had spoken in ", ". In this", "language"),
    ("those who spoke ", " and Turkish", "language"),
    ("banners in ", " villages", "nationality"),  # an adjective: "in Turkish villages"
    ("leave to use the ", " language", "nationality"),
    ("defended himself orally in ", " via an interpreter", "language"),  # a preposition after it: a noun
])
def test_a_nationality_word_is_a_language_only_as_a_noun_after_speaking(before, after, kind):
    assert kind_of("DEM", "NORP", "Turkish", before, after) == kind


@pytest.mark.parametrize("surface, before, after, kind", [
    ("Saudi", "the plant we are building in ", ", and the", "group"),  # no language WordNet knows: no language
    ("Polish", "the hearing was held in ", ".", "language"),
    ("Greek", "Nikos Anastasiou (", ": Νίκος", "language"),  # a language named before words written in it
    ("Swedish", "the ", ": a report", "nationality"),  # not inside a gloss: no language
    ("Argentine", "an ", " singer", "nationality"),  # WordNet's adjective of Argentina, which countryinfo lacks
])
def test_a_language_is_a_name_wordnet_files_as_one(surface, before, after, kind):
    assert kind_of("DEM", "NORP", surface, before, after) == kind



@pytest.mark.parametrize("surface, continent", [("North America", True), ("the Middle East", True), ("Europe", True),
                                                ("North", False), ("East", False), ("Latin", False)])
def test_continents_are_whole_names(surface, continent):
    assert (kind_of("LOC", "LOC", surface) == "continent") == continent  # "North" had been a continent


def test_a_language_the_tagger_names_before_the_word_language_is_its_adjective():
    # "use the German language" had become "use the a European language language"
    assert kind_of("MISC", "LANGUAGE", "German", "to use the ", " language (Rule 27") == "nationality"
    assert kind_of("MISC", "LANGUAGE", "Turkish", "submissions in ", ".") == "language"
