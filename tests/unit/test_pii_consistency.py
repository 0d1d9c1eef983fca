"""PERSON precision (vetting.py): bare PERSON candidates (NER/propagation, no title, no first name) that are places,
common words, or parts of another entity of the document are not persons."""
from __future__ import annotations

import re

import pytest

from anonstream.pii.base import Detection
from anonstream.pii.engine import DocumentEntities, PiiEngine
from anonstream.pii.vetting import PersonVetter, VetContext


@pytest.fixture(scope="module")
def engine() -> PiiEngine:
    return PiiEngine.from_config()  # spaCy loaded once for the module (and cached per process)


@pytest.fixture(scope="module")
def vetter() -> PersonVetter:
    return PersonVetter()


def _ner_person(text: str, surface: str, occurrence: int = 0, recognizer: str = "spacy_ner") -> Detection:
    start = [m.start() for m in re.finditer(re.escape(surface), text)][occurrence]
    return Detection(start, start + len(surface), "PERSON", 0.85, recognizer, "ner:PERSON", subtype="PERSON")


def _labels(text: str, dets: list[Detection]) -> dict[str, str]:
    return {text[d.start : d.end]: d.type for d in dets}


# ---------------------------------------------------------------------------------------------
# 1. precision: vetting of bare PERSON candidates
# ---------------------------------------------------------------------------------------------
def test_known_place_and_locative_context_are_places(vetter):
    text = "Ms T. Aslan, a lawyer practising in Zielona Góra, said the applicant lives in Izmir."
    out = vetter.vet(text, [_ner_person(text, "Zielona Góra"), _ner_person(text, "Izmir")])
    assert _labels(text, out) == {"Zielona Góra": "LOC", "Izmir": "LOC"}  # locative context; gazetteer place
    assert all("+vet:" in d.rule for d in out)


def test_common_and_legal_words_are_dropped(vetter):
    text = "Article 5 of Law no. 3713 applied. A number of hearing dates were set."
    assert vetter.vet(text, [_ner_person(text, "Law"), _ner_person(text, "A", recognizer="propagation")]) == []


def test_field_of_study_is_education(vetter):
    text = "He studied Law at the Madras Law College."
    assert _labels(text, vetter.vet(text, [_ner_person(text, "Law")])) == {"Law": "DEM"}


def test_word_inside_a_longer_entity_takes_its_type(vetter):
    text = "They worked for the Diyarbakır Sur Municipality (“the Municipality”). The Municipality refused."
    org = text.index("Diyarbakır")
    dets = [Detection(org, org + len("Diyarbakır Sur Municipality"), "ORG", 0.85, "spacy_ner", "ner:ORG", subtype="ORG"),
            _ner_person(text, "Municipality", 2)]
    out = vetter.vet(text, dets)
    assert [d.type for d in out] == ["ORG", "ORG"]


def test_registry_of_earlier_chunks_is_evidence(engine, vetter):
    registry = DocumentEntities("d")
    registry.resolve("ORG", "Kowalewo District Court", "ORG", "institution")
    registry.resolve("ORG", "FDB", "ORG", "spacy_ner")
    ctx = VetContext.from_registry(registry)
    text = "Then Kowalewo decided, and FDB appealed."
    out = vetter.vet(text, [_ner_person(text, "Kowalewo"), _ner_person(text, "FDB")], ctx)
    # the distinguishing name of a generic institution is a place; the same form as a known ORG is that ORG
    assert _labels(text, out) == {"Kowalewo": "LOC", "FDB": "ORG"}


def test_established_persons_titles_and_initials_are_kept(vetter):
    text = "Mr Cengiz Polat founded Polat Holding in Izmir; Polat and A.H. signed. Mr Batman agreed."
    s = text.index("Mr Cengiz Polat")
    holding = text.index("Polat Holding")
    dets = [Detection(s, s + 15, "PERSON", 0.95, "title", "title:Mr", subtype="PERSON"),
            Detection(holding, holding + 13, "ORG", 0.85, "spacy_ner", "ner:ORG", subtype="ORG"),
            _ner_person(text, "Polat", 2), _ner_person(text, "A.H."),
            Detection(text.index("Mr Batman"), text.index("Mr Batman") + 9, "PERSON", 0.95, "title", "title:Mr")]
    out = vetter.vet(text, dets)
    assert [d.type for d in out] == ["PERSON", "ORG", "PERSON", "PERSON", "PERSON"]


def test_enumerated_section_headings_are_not_entities(vetter):
    text = "The investigation is still pending.\n\nA. Background of the case\n\nJ. Smith was born in 1960.\n"
    heading = Detection(text.index("A. Background"), text.index("A. Background") + 13, "PERSON", 0.85, "spacy_ner",
                        "ner:PERSON")
    name = Detection(text.index("J. Smith"), text.index("J. Smith") + 8, "PERSON", 0.85, "spacy_ner", "ner:PERSON")
    assert _labels(text, vetter.vet(text, [heading, name])) == {"J. Smith": "PERSON"}


def test_initials_read_as_a_place_are_a_person(vetter):
    text = "The property was sold to A.H. and E.H. in 1998."
    s = text.index("E.H.")
    out = vetter.vet(text, [Detection(s, s + 4, "LOC", 0.85, "spacy_ner", "ner:GPE", subtype="GPE")])
    assert out[0].type == "PERSON" and out[0].rule.endswith("+vet:initials")


def test_engine_does_not_call_places_or_legal_words_persons(engine):
    registry = DocumentEntities("d")
    chunks = ["The applicant was represented by Ms T. Aslan, a lawyer practising in Izmir. He lives in Łódź.",
              "On 5 December 2001 the Izmir State Security Court convicted him under Article 5 of Law no. 3713."]
    persons = {c[s.start : s.end] for c in chunks for s in engine.detect(c, registry) if s.type == "PERSON"}
    assert not persons & {"Izmir", "Łódź", "Law"}
    assert any("Aslan" in p for p in persons)
