"""Name recognizers of gazetteer.py that need no spaCy: pseudonymous letters and initials used as names."""
from __future__ import annotations

import pytest

from anonstream.pii.gazetteer import LetterNameRecognizer


def _names(text):
    return [text[d.start : d.end] for d in LetterNameRecognizer().analyze(text) if d.type == "PERSON"]


@pytest.mark.parametrize("text,names", [
    ("he had abused other people including his brother, AM.", ["AM"]),
    ("the witness AM had left to work abroad", ["AM"]),
    ("made by a fourth person, MC, and was", ["MC"]),
    ("at which new counsel (B) appeared", ["B"]),
])
def test_one_or_two_capitals_after_a_person_noun_are_a_name(text, names):
    assert _names(text) == names


@pytest.mark.parametrize("text", [
    "the defendant BG Bank A/S",  # two capitals before a name: part of it
    "on behalf of the applicant, B appealed",  # one capital after a comma: a sentence goes on
    "the applicant, NB, submitted",  # an abbreviation, not initials
    "his son, UK-born,",
])
def test_capitals_that_are_not_a_name(text):
    assert _names(text) == []


@pytest.mark.parametrize("text, occupation", [
    ("He said he did not know any doctor who could take over.", "doctor"),
    ("She worked as a primary school teacher in Konak.", "primary school teacher"),
    ("He was a tennis coach.", "tennis coach"),
    ("He worked as a private security guard.", "private security guard"),
])
def test_an_occupation_takes_the_nouns_before_it_but_no_verb_or_determiner(text, occupation):
    from anonstream.pii.gazetteer import GazetteerRecognizer

    found = [text[d.start:d.end] for d in GazetteerRecognizer().analyze(text) if d.subtype == "OCCUPATION"]
    assert occupation in found


def test_an_occupation_word_used_as_an_adjective_is_none():
    from anonstream.pii.gazetteer import GazetteerRecognizer

    text = "The principal public prosecutor's office in Hamm wrote to the principal of the school."
    found = [(d.start, text[d.start:d.end]) for d in GazetteerRecognizer().analyze(text) if d.subtype == "OCCUPATION"]
    assert (text.index("principal of"), "principal") in found
    assert all(start != text.index("principal public") for start, _ in found)


def test_a_word_the_dictionary_knows_only_as_an_adjective_is_no_occupation():
    from anonstream.pii.gazetteer import GazetteerRecognizer, occupations

    text = "He is a retired footballer and a farmer."
    found = [text[d.start:d.end] for d in GazetteerRecognizer().analyze(text) if d.subtype == "OCCUPATION"]
    assert "retired" not in found and "footballer" in found and "farmer" in found
    assert any(o.lower() == "retired" for o in occupations())  # the list has it: the dictionary decides


@pytest.mark.parametrize("text, occupation, found", [
    ("We will host our investor day in May.", "investor", False),  # modifies "day"
    ("The pilot program grew.", "pilot", False),
    ("A key driver growth was pricing.", "driver", False),
    ("The driver who hit him fled.", "driver", True),  # a function word after it
    ("She is a singer songwriter.", "singer", True),  # a person noun after it
])
def test_an_occupation_word_that_modifies_the_noun_after_it_is_none(text, occupation, found):
    from anonstream.pii.gazetteer import GazetteerRecognizer

    words = [text[d.start:d.end] for d in GazetteerRecognizer().analyze(text) if d.subtype == "OCCUPATION"]
    assert (occupation in " ".join(words)) is found


def test_a_city_belongs_to_the_documents_country_only_where_geonames_has_it_there():
    from anonstream.pii.gazetteer import city_country

    assert city_country("Lincoln", prefer="GB") == "GB" and city_country("Lincoln", prefer="US") == "US"
    assert city_country("Cracow", prefer="PL") == "PL"  # an alternate name through its city
    assert city_country("Kraków", prefer="US") == "PL"  # no US namesake: the only (dominant) one
    assert city_country("Trinidad", prefer="US") is None  # namesakes in several countries, none confirmed
    assert city_country("Trinidad") is not None  # without a document country: the largest namesake, as before
