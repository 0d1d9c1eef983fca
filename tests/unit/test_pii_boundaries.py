"""Extension of a mention to the whole name (shared/anonstream/pii/boundaries.py), on hand-made detections."""
from __future__ import annotations

import pytest

from anonstream.pii.base import Detection
from anonstream.pii.boundaries import extend_names, title_runs, without_ordinal


def _det(text: str, surface: str, type_: str, subtype: str | None = None) -> Detection:
    start = text.index(surface)
    return Detection(start, start + len(surface), type_, 0.85, "spacy_ner", "ner:X", subtype=subtype)


def _surfaces(text: str, dets: list[Detection]) -> list[tuple[str, str]]:
    return [(text[d.start:d.end], d.type) for d in dets]


@pytest.mark.parametrize("text, runs", [
    ("He won a Canadian Film Award in 1969.", ["Canadian Film Award"]),
    ("in Istanbul. The Turkish Government replied", ["Turkish Government"]),  # a full stop ends a run
    ("On 5 November 2001 the Court of Cassation held", ["Court of Cassation~"]),  # months, years: no
    ("the Regional Court’s decision", ["Regional Court"]),  # possessive trimmed
    ("St. Patrick's High School", ["St. Patrick's High School"]),  # abbreviation dot, inner possessive
    ("ALF Tales, Star Wars: Droids, Rock and Roll", ["ALF Tales", "Star Wars: Droids~", "Rock and Roll~"]),
    ("a violation of Article 6 of the Convention", []),  # legal references are not one name
    ("AS TO THE FACTS", []),  # all-caps headings
    ("He is a contributor to BBC Radio 5 Live.", ["BBC Radio 5 Live"]),
    ("and I'm the Chief Financial Officer for Acme.", ["Chief Financial Officer for Acme~"]),  # the pronoun: no name
])
def test_title_runs(text, runs):
    assert [text[r.start:r.end] + ("~" if r.loose else "") for r in title_runs(text)] == runs


def test_seed_takes_the_run_and_is_retyped_from_its_head():
    text = "He won a Canadian Film Award, praised by the Polish-German Reconciliation Foundation."
    dets = [_det(text, "Canadian", "DEM", "NORP"), _det(text, "Polish-German", "DEM", "NORP")]
    assert _surfaces(text, extend_names(text, dets)) == [
        ("Canadian Film Award", "MISC"), ("Polish-German Reconciliation Foundation", "ORG")]


def test_a_demonym_before_a_code_becomes_a_legal_reference():
    text = "under the Turkish Criminal Code of 1926"
    (law,) = extend_names(text, [_det(text, "Turkish", "DEM", "NORP")])
    assert (text[law.start:law.end], law.type, law.subtype) == ("Turkish Criminal Code", "MISC", "LAW")


def test_runs_with_a_person_date_or_position_stay_separate():
    text = "Kentucky State Treasurer; Swiss Family Robinson"
    dets = [_det(text, "Kentucky", "LOC", "GPE"), _det(text, "Swiss", "DEM", "NORP"),
            _det(text, "Robinson", "PERSON")]
    assert _surfaces(text, extend_names(text, dets)) == [("Kentucky", "LOC"), ("Swiss", "DEM"), ("Robinson", "PERSON")]


def test_loose_runs_only_for_misc_and_inner_names_absorbed():
    text = "the film Bullets over Broadway. Mr Wołąsiewicz of the Ministry of Foreign Affairs"
    dets = [_det(text, "Bullets", "MISC", "WORK_OF_ART"), _det(text, "Broadway", "LOC", "FAC"),
            _det(text, "Ministry of Foreign Affairs", "ORG")]
    assert _surfaces(text, extend_names(text, dets)) == [
        ("Bullets over Broadway", "MISC"), ("Ministry of Foreign Affairs", "ORG")]


def test_a_loose_run_does_not_start_at_a_common_word_that_opens_the_sentence():
    text = "Sales of the Boeing 787 rose. Revenue of Kashi and Pringles grew. Songs of Warren Zevon is an album."
    dets = [_det(text, "787", "MISC", "PRODUCT"), _det(text, "Kashi", "MISC", "PRODUCT"),
            _det(text, "Songs", "MISC", "WORK_OF_ART")]
    assert [text[d.start:d.end] for d in extend_names(text, dets)] == [
        "Boeing 787", "Kashi and Pringles", "Songs of Warren Zevon"]  # a run from its first word takes it all


def test_ordinal_joins_the_name_but_not_the_decision():
    text = "at the 17th Academy Awards; the 38th president of the 12th Assize Court"
    dets = [_det(text, "Academy Awards", "MISC", "EVENT"), _det(text, "president", "DEM", "OCCUPATION"),
            _det(text, "Assize Court", "ORG")]
    out = extend_names(text, dets)
    assert [text[d.start:d.end] for d in out] == ["17th Academy Awards", "38th president", "12th Assize Court"]
    assert without_ordinal("12th Assize Court") == "Assize Court"
    assert without_ordinal("Assize Court") == "Assize Court"


@pytest.mark.parametrize("text, found, expected", [
    ("growing our non-cigarettes 20 to 25 basis points.", "25 basis points", "20 to 25 basis points"),
    ("a tax rate of 23% to 24% for Q1", "24%", "23% to 24%"),
    ("sales rose 3-4% in the year", "4%", "3-4%"),
    ("from 2015 to 25 stores", "25 stores", "25 stores"),  # a year, then the count it came to
    ("he was sentenced to 25 years", "25 years", "25 years"),  # "to" alone: no range
    ("version 1.2 to 25 users", "25 users", "1.2 to 25 users"),
    ("prices shot up from 1% to 5% last year", "5%", "5%"),  # where it moved from and to: two figures
    ("margins ranging from 1% to 5%", "5%", "1% to 5%"),
])
def test_a_quantity_takes_the_first_end_of_its_range(text, found, expected):
    out = extend_names(text, [_det(text, found, "QUANTITY", "CARDINAL")])
    assert _surfaces(text, out) == [(expected, "QUANTITY")]
