"""The learned span detector (shared/anonstream/detector): data preparation, the honest dev split, the metrics,
the vetting, and a tiny model trained, saved, loaded and plugged into the pii engine."""
from __future__ import annotations

from pathlib import Path

import pytest

from anonstream.detector.cli import find_data_root, training_corpus
from anonstream.detector.data import (TUNE, VALIDATION, AnnotatedText, dev_half, kfold, load_dev_stopgap,
                                      non_overlapping, paragraphs)
from anonstream.detector.metrics import agreement, score_corpus, score_document
from anonstream.detector.recognizer import LearnedSpanRecognizer, resolve_detector
from anonstream.pii.base import Detection

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
needs_data = pytest.mark.skipif(not (DATA / "tab" / "dev-stopgap").exists(), reason="shared/data not present")


def test_dev_half_is_fixed_by_the_doc_id():
    ids = [f"001-{n}" for n in range(60000, 60400)]
    halves = [dev_half(i) for i in ids]
    assert halves == [dev_half(i) for i in ids]
    assert set(halves) == {TUNE, VALIDATION}
    assert 150 < halves.count(TUNE) < 250


def test_kfold_partitions_the_documents():
    items = [AnnotatedText(str(i), "x", (), "t") for i in range(7)]
    folds = list(kfold(items, 2))
    assert [d.doc_id for d in folds[0][1]] == ["0", "2", "4", "6"]
    for fit, held in folds:
        assert sorted(d.doc_id for d in fit + held) == sorted(d.doc_id for d in items)
        assert not {d.doc_id for d in fit} & {d.doc_id for d in held}


def test_paragraphs_never_cut_a_span_and_keep_offsets():
    text = "Mr A. Smith\nlived\nin Oslo.\nHe was born\nin 1960.\n"
    item = AnnotatedText("d", text, ((3, 17, "PERSON"), (21, 25, "LOC"), (44, 48, "DATETIME")), "t")
    pieces = list(paragraphs(item, min_chars=5))
    assert "".join(p for _, p, _ in pieces) == text
    kept = [(start + s, start + e, t) for start, _, spans in pieces for s, e, t in spans]
    assert sorted(kept) == sorted(item.spans)  # the span over the first line break keeps its piece whole


def test_non_overlapping_keeps_the_longer_span():
    assert non_overlapping([(0, 5, "ORG"), (2, 10, "LOC"), (12, 14, "CODE")]) == [(2, 10, "LOC"), (12, 14, "CODE")]


def test_mention_recall_needs_ninety_percent_and_precision_counts_characters():
    item = AnnotatedText("d", "x" * 40, ((0, 10, "PERSON"), (20, 30, "ORG")), "t")
    scores = score_document(item, [(0, 9, "PERSON"), (20, 28, "ORG"), (35, 40, "ORG")])
    assert scores.recall == 0.5  # 9/10 found, 8/10 not
    assert scores.recall_by_type() == {"ORG": 0.0, "PERSON": 1.0}
    assert scores.precision == pytest.approx(17 / 22)
    assert scores.precision_by_type() == {"ORG": pytest.approx(8 / 13), "PERSON": 1.0}
    assert score_corpus([item], {}).recall == 0.0  # a document without detections


def test_vetting_drops_uncovered_rule_spans_of_vetted_types_only():
    rec = LearnedSpanRecognizer(nlp=None, vet=("MISC",))
    found = [Detection(0, 10, "MISC", 0.8, "learned"), Detection(2, 8, "MISC", 0.9, "proper_phrase"),
             Detection(20, 30, "MISC", 0.9, "spacy_ner"), Detection(25, 35, "PERSON", 0.9, "title")]
    kept = rec.vet_detections("x" * 40, found)
    assert [(d.start, d.recognizer) for d in kept] == [(0, "learned"), (2, "proper_phrase"), (25, "title")]
    assert LearnedSpanRecognizer(nlp=None).vet_detections("x", found) == found


def test_a_vetted_span_inside_a_rule_span_of_another_type_is_vouched_for_without_the_model():
    text = "He was held in Kandıra prison. The Book of X was read."
    rec = LearnedSpanRecognizer(nlp=None, vet=("MISC",), windows="uncertain")
    k, b = text.index("Kandıra"), text.index("Book")
    found = [Detection(k, k + 14, "ORG", 0.9, "gazetteer"), Detection(k, k + 7, "MISC", 0.6, "proper_phrase"),
             Detection(b, b + 9, "MISC", 0.6, "proper_phrase")]
    assert rec.vouched(found) == {id(found[1])}
    assert [text[s:e] for s, e in rec.uncertain_sentences(text, found, rec.vouched(found))] == [
        "The Book of X was read."]
    kept = LearnedSpanRecognizer(nlp=None, vet=("MISC",)).vet_detections(text, found)
    assert [text[d.start:d.end] for d in kept] == ["Kandıra prison", "Kandıra"]


def test_vet_cover_sets_how_much_of_a_rule_span_the_learned_spans_must_cover():
    found = [Detection(0, 3, "MISC", 0.8, "learned"), Detection(0, 10, "MISC", 0.9, "proper_phrase")]
    assert len(LearnedSpanRecognizer(nlp=None, vet=("MISC",)).vet_detections("x" * 10, found)) == 1
    assert len(LearnedSpanRecognizer(nlp=None, vet=("MISC",), vet_cover=0.3).vet_detections("x" * 10, found)) == 2


def test_uncertain_sentences_are_those_of_vetted_spans_merged():
    text = "Mr A met B. He read the Book of X at home.\nOn 3 May he left. The Book of X and Y were read."
    rec = LearnedSpanRecognizer(nlp=None, vet=("MISC",), windows="uncertain")
    x1, x2 = text.index("Book"), text.rindex("Book")
    found = [Detection(0, 4, "PERSON", 0.9, "title"), Detection(x1, x1 + 9, "MISC", 0.6, "proper_phrase"),
             Detection(x2, x2 + 9, "MISC", 0.6, "proper_phrase"), Detection(x2 + 14, x2 + 15, "MISC", 0.6, "ner")]
    assert [text[s:e] for s, e in rec.uncertain_sentences(text, found)] == [
        "He read the Book of X at home.\n", "The Book of X and Y were read."]
    assert rec.analyze(text) == []  # the model runs only when asked to vet


def test_detector_spec():
    assert resolve_detector("shipped")[0].name == "model"
    assert resolve_detector({"model": "/m", "score": 0.8, "vet": ["ORG"]}) == (
        Path("/m"), {"score": 0.8, "vet": ("ORG",), "windows": False})
    assert resolve_detector({"vet": ["MISC"], "vet_cover": 0.2, "windows": "uncertain"})[1] == {
        "score": 0.7, "vet": ("MISC",), "windows": "uncertain", "vet_cover": 0.2}
    with pytest.raises(ValueError, match="set vet"):
        resolve_detector({"windows": "uncertain"})
    with pytest.raises(ValueError, match="GPE"):
        resolve_detector({"vet": ["GPE"]})
    with pytest.raises(ValueError, match="threshold"):
        resolve_detector({"threshold": 1})


@needs_data
def test_training_corpus_never_reads_the_validation_half_or_the_held_out_fold():
    root = find_data_root(str(DATA))
    items, info = training_corpus(root, hold_out_fold=(1, 2))
    ids = {d.doc_id for d in items}
    dev = load_dev_stopgap(root / "tab" / "dev-stopgap")
    assert not ids & {d.doc_id for d in dev if dev_half(d.doc_id) == VALIDATION}
    assert {d.doc_id for d in dev if dev_half(d.doc_id) == TUNE} <= ids
    assert info["documents"]["tab-train"] == 50 and info["tab_train_held_out_fold"] == [1, 2]
    assert all(d.text[s:e].strip() for d in items for s, e, _ in d.spans)


def test_tiny_model_trains_saves_loads_and_runs_in_the_engine(tmp_path):
    from anonstream.detector.train import load_detector, save_detector, train_detector
    from anonstream.pii.engine import DocumentEntities, PiiConfig, PiiEngine

    text = "Application no. 12345/06 was lodged by Mr Zorblax Quint, a Ruritanian national, on 3 May 2006."
    spans = ((16, 24, "CODE"), (42, 55, "PERSON"), (59, 69, "DEM"), (83, 93, "DATETIME"))
    items = [AnnotatedText("a", text, spans, "t"), AnnotatedText("b", text.replace("Zorblax", "Quorbin"), spans, "t")]
    nlp = train_detector(items, epochs=12, seed=0, progress=False)
    out = save_detector(nlp, tmp_path / "m", {"documents": 2})
    assert (out / "ner" / "model").stat().st_size < 10_000_000 and not (out / "ner" / "vocab").exists()
    rec = LearnedSpanRecognizer(load_detector(out))
    found = {(d.start, d.end, d.type) for d in rec.analyze(text)}
    assert (42, 55, "PERSON") in found and found <= set(spans)  # learned from two texts, nothing outside them
    engine = PiiEngine.from_config(PiiConfig(detector=str(out)))
    assert isinstance(engine.recognizers[-1], LearnedSpanRecognizer)
    result = engine.detect(text, DocumentEntities("a"))
    assert any(s.type == "CODE" and s.identifier_type == "DIRECT" for s in result)
    windowed = LearnedSpanRecognizer(rec.nlp, windows=True)  # every mention here has a trigger token
    assert {(d.start, d.end, d.type) for d in windowed.analyze(text)} == found


def test_agreement_scores_every_ordered_pair_of_annotators_and_weighs_each_document_once():
    text = "x" * 40
    a = AnnotatedText("d1", text, ((0, 10, "PERSON"), (20, 30, "CODE")), "t")
    b = AnnotatedText("d1", text, ((0, 10, "PERSON"),), "t")
    c = AnnotatedText("d2", text, ((5, 9, "LOC"),), "t")
    d = AnnotatedText("d2", text, ((5, 9, "LOC"),), "t")
    pooled, doc_recall, doc_precision = agreement([{"a1": a, "a2": b}, {"a1": c, "a3": d}])
    # d1: b against a finds PERSON, misses CODE (1/2); a against b finds PERSON (1/1), precision 10/20
    # d2: identical layers, both directions perfect
    assert pooled.mentions == {"PERSON": 2, "CODE": 1, "LOC": 2}
    assert pooled.recall_by_type() == {"CODE": 0.0, "LOC": 1.0, "PERSON": 1.0}
    assert doc_recall == [pytest.approx(0.75), 1.0]
    assert doc_precision == [pytest.approx(0.75), 1.0]
    assert agreement([{"only": a}]) == (pooled.__class__(), [], [])  # one annotator: nothing to compare


@needs_data
def test_tab_layers_are_the_documents_with_several_annotators():
    from anonstream.detector.data import load_tab_layers

    docs = load_tab_layers(DATA / "tab" / "echr_train_first100.json")
    assert len(docs) == 21 and all(len(layers) >= 2 for layers in docs)
    assert all(len({item.doc_id for item in layers.values()}) == 1 for layers in docs)
