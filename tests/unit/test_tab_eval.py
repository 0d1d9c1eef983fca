"""TAB evaluation (FORMAT.md §3, TAB evaluation.py definitions) on a hand-built document with two annotators;
expected values are computed by hand in the comments."""
from __future__ import annotations

import json

import pytest

from anonstream.evaluation.tab import TabEvaluator, decode_articles, load_tab, parse_document
from anonstream.pii.spacy_model import load_spacy

TEXT = "Mr John Smith lives in Oslo. He sold 300 apples to Mrs. Ann Lee in 1990 and 1991."


def _m(doc_id, ann, k, ent, etype, itype, span):
    s = TEXT.index(span)
    return {"entity_mention_id": f"{doc_id}_{ann}_em{k}", "entity_id": f"{doc_id}_{ann}_{ent}", "entity_type": etype,
            "identifier_type": itype, "start_offset": s, "end_offset": s + len(span), "span_text": span,
            "edit_type": "check", "confidential_status": "NOT_CONFIDENTIAL"}


DOC = {
    "doc_id": "d1", "text": TEXT, "dataset_type": "test", "task": "Task: ... person: John Smith",
    "meta": {"year": 2000, "articles": [91, 34, 54, 34, 44, 32, 34, 52, 49, 34, 93], "countries": "NOR",
             "applicant": "John Smith", "legal_branch": "CHAMBER"},
    "quality_checked": False,
    "annotations": {
        "a1": {"entity_mentions": [
            _m("d1", "a1", 1, "e1", "PERSON", "DIRECT", "Mr John Smith"),
            _m("d1", "a1", 2, "e2", "LOC", "QUASI", "Oslo"),
            _m("d1", "a1", 3, "e3", "QUANTITY", "NO_MASK", "300 apples"),
            _m("d1", "a1", 4, "e7", "DATETIME", "NO_MASK", "1990"),  # first mention NO_MASK ...
            _m("d1", "a1", 5, "e7", "DATETIME", "QUASI", "1991"),  # ... disagreement forces need_masking
        ]},
        "a2": {"entity_mentions": [
            _m("d1", "a2", 1, "e4", "PERSON", "DIRECT", "John Smith"),
            _m("d1", "a2", 2, "e5", "LOC", "NO_MASK", "Oslo"),
            _m("d1", "a2", 3, "e6", "PERSON", "QUASI", "Mrs. Ann Lee"),
        ]},
    },
}


def _span(s):
    i = TEXT.index(s)
    return [i, i + len(s)]


@pytest.fixture(scope="module")
def evaluator():
    return TabEvaluator([parse_document(DOC)], nlp=load_spacy())


def test_loader_accepts_both_article_forms_and_qc_forms(tmp_path):
    assert decode_articles([91, 34, 54, 34, 44, 32, 34, 52, 49, 34, 93]) == [6, 41]
    assert decode_articles([6, 41]) == [6, 41]
    path = tmp_path / "x.json"
    wiki = {k: v for k, v in DOC.items() if k not in ("meta", "quality_checked")}
    path.write_text(json.dumps([DOC, dict(wiki, doc_id="d2")]))
    docs = load_tab(path)
    assert docs[0].meta["articles"] == [6, 41] and docs[0].quality_checked is False
    assert docs[1].meta == {} and docs[1].annotators == ["a1", "a2"]


def test_loader_rejects_bad_offsets(tmp_path):
    bad = json.loads(json.dumps(DOC))
    bad["annotations"]["a1"]["entity_mentions"][0]["span_text"] = "Mr Jon Smith"
    with pytest.raises(ValueError):
        parse_document(bad)


def test_entity_recall_forgives_mr_but_not_mrs_dot(evaluator):
    system = {"d1": [_span("John Smith"), _span("Ann Lee"), _span("1991")]}
    s = evaluator.evaluate(system)
    # DIRECT: e1 "Mr John Smith" (uncovered "Mr " is forgiven: token "Mr", lower "mr") and e4 -> 2/2
    assert s["recall_direct_entities"] == 1.0
    # QUASI entities to mask: e2 Oslo (unmasked), e6 "Mrs. Ann Lee" ("Mrs." lower-cases to "mrs.", not in the
    # list -> unmasked), e7 (needs only its QUASI mention 1991 -> masked): 1/3
    assert s["recall_quasi_entities"] == pytest.approx(1 / 3)


def test_token_recall_and_precision_micro_averaged(evaluator):
    system = {"d1": [_span("John Smith"), _span("300 apples")]}
    s = evaluator.evaluate(system)
    # token units of entities to mask: e1 Mr/John/Smith, e2 Oslo, e7 1990/1991 (all mentions, NO_MASK
    # ones included), e4 John/Smith, e6 Mrs/Ann/Lee = 11; masked: Mr (forgiven), John, Smith, John, Smith = 5
    assert s["token_recall"] == pytest.approx(5 / 11)
    # precision units: John, Smith (contained by a1 e1 and a2 e4: k=2), 300, apples (only NO_MASK gold: k=0);
    # A = 2 annotators -> (2+2+0+0) / (2*4)
    assert s["token_precision"] == pytest.approx(0.5)
    # mention level: span "John Smith" fully inside both annotators' mask-needed mentions, "300 apples" not
    assert s["mention_precision"] == pytest.approx(0.5)
    assert s["entity_misses_direct_by_type"] == {"PERSON": {"missed": 0, "total": 2}}
