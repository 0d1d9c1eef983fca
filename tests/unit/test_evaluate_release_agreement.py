"""evaluate-release on agreement (every annotator) and the kind judged by gold type, places by containment."""
from __future__ import annotations

import re

import pytest

from anonstream.evaluation.release import evaluate_release
from anonstream.evaluation.tab import parse_document


def _layer(doc_id: str, text: str, annotator: str, mentions: list[tuple[str, str, str, str]]) -> dict:
    """Mentions (span text, entity type, identifier type, entity id), found left to right."""
    out, pos = [], 0
    for k, (span, etype, ident, entity) in enumerate(mentions):
        start = text.index(span, pos)
        pos = start + 1
        out.append({"entity_mention_id": f"{doc_id}_{annotator}_em{k}", "entity_id": f"{doc_id}_{annotator}_{entity}",
                    "entity_type": etype, "identifier_type": ident, "start_offset": start,
                    "end_offset": start + len(span), "span_text": span})
    return {"entity_mentions": out}


def _document(doc_id: str, text: str, layers: dict[str, list]) -> object:
    return parse_document({"doc_id": doc_id, "text": text,
                           "annotations": {a: _layer(doc_id, text, a, m) for a, m in layers.items()}})


TEXT = "Mr John Smith met Acme Corp in Lyon on Monday.\nThe Court ruled."
OUT = "[PERSON_1] met Beta Inc in Lyon on a day.\nThe Court ruled."
GOLD = [_document("d1", TEXT, {
    "a1": [("John Smith", "PERSON", "DIRECT", "e0"), ("Acme Corp", "ORG", "QUASI", "e1"), ("Lyon", "LOC", "QUASI", "e2"),
           ("Monday", "DATETIME", "NO_MASK", "e3"), ("Court", "ORG", "NO_MASK", "e4")],
    "a2": [("Mr John Smith", "PERSON", "QUASI", "e0"), ("Acme Corp", "ORG", "QUASI", "e1"),
           ("Lyon", "LOC", "NO_MASK", "e2"), ("Court", "ORG", "NO_MASK", "e3")]})]

_LEXICON = {"Acme Corp": "ORG", "Beta Inc": "ORG", "Gamma Ltd": "ORG", "Lyon": "GPE", "Portland": "GPE",
            "Oregon": "GPE", "Madrid": "GPE", "France": "GPE", "Zork": "PERSON", "United States": "GPE"}
_STUB = re.compile("|".join(re.escape(k) for k in sorted(_LEXICON, key=len, reverse=True)))


def stub_tagger(lines):
    return [[(m.start(), m.end(), _LEXICON[m.group()]) for m in _STUB.finditer(line)] for line in lines]


def test_agreement_over_every_annotator():
    s = evaluate_release(GOLD, {"d1": OUT}, tagger=stub_tagger)
    counts = {k: (c.total, c.survived) for k, c in s.agreement.items()}
    # John Smith (a1 DIRECT) and Mr John Smith (a2 QUASI) overlap: one DIRECT mention, gone
    assert counts["direct"] == (1, 0)
    assert counts["agreed_quasi"] == (1, 0)  # Acme Corp, masked by both, changed
    assert counts["disputed"] == (1, 1)  # Lyon: QUASI for a1, NO_MASK for a2; kept
    assert counts["agreed_no_mask"] == (2, 1)  # Monday (a2 has no mention of it) changed, Court kept
    h = s.headline
    assert h["agreed_quasi_changed_share"] == 1.0
    assert h["agreed_no_mask_kept_share"] == 0.5
    assert h["direct_any_annotator_surviving_share"] == 0.0
    assert h["disputed_changed_share"] == 0.0
    # QUASI entities: a1 Acme, a1 Lyon, a2 Mr John Smith, a2 Acme; all but Lyon changed
    assert h["r_quasi_all_annotators"] == pytest.approx(3 / 4)
    markdown = s.to_markdown()
    assert "| agreed quasi | 1 | changed | 100.0 % |" in markdown
    assert "| QUASI entities, every annotator | 4 | R_quasi (all mentions changed) | 75.0 % |" in markdown


def test_kind_by_gold_type_places_by_containment():
    text = "Acme Corp of Portland sued Gamma Ltd in Lyon, France.\nZork came."
    out = "Beta Inc of Oregon sued Zork in the United States, France.\nZork came."
    gold = [_document("d1", text, {"a1": [("Acme Corp", "ORG", "QUASI", "e0"), ("Portland", "LOC", "QUASI", "e1"),
                                          ("Gamma Ltd", "ORG", "QUASI", "e2"), ("Lyon", "LOC", "QUASI", "e3")]}),
            _document("d2", "Madrid and Gamma Ltd.", {"a1": [("Madrid", "LOC", "QUASI", "e0"),
                                                             ("Gamma Ltd", "ORG", "QUASI", "e1")]})]
    s = evaluate_release(gold, {"d1": out, "d2": "Madrid and Gamma Ltd."}, tagger=stub_tagger)
    # Portland -> Oregon contained; Lyon (France named) -> the United States does not contain it
    assert s.place_generalizations == {"contained": 1, "place_not_container": 1}
    # Acme Corp -> Beta Inc kept (ORG), Gamma Ltd -> Zork lost (PERSON), two places: 2 of 4
    assert (s.kind_gold.judged, s.kind_gold.agree) == (4, 2)
    # baseline: values of the same gold type from d2 only (Madrid for the places, Gamma Ltd for Acme Corp;
    # Gamma Ltd itself has no other ORG value in another document)
    assert (s.kind_gold.baseline_judged, s.kind_gold.baseline_agree) == (3, 3)
    assert s.headline["kind_kept_by_gold_type"] == 0.5
