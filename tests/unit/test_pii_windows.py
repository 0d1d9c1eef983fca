"""NER on candidate windows (anonstream.pii.windows): coverage, merging, offsets, no-trigger texts, and
equivalence with the full-text NER on real TAB paragraphs."""
from __future__ import annotations

from pathlib import Path

import pytest

from anonstream.pii.engine import DocumentEntities, PiiConfig, PiiEngine
from anonstream.pii.spacy_model import load_spacy
from anonstream.pii.windows import NerWindows

TAB = Path(__file__).resolve().parents[3] / "shared" / "data" / "tab" / "echr_train_first100.json"
# (doc_id, paragraph index in text.split("\n")): paragraphs where the windowed NER finds exactly the full-text
# entities while sending only part of the tokens to the NER
PARAGRAPHS = [("001-90194", 14), ("001-90194", 36), ("001-84741", 16), ("001-84741", 18), ("001-90786", 30)]

TEXT = ("On 3 March 2001 Mr Cengiz Polat, a Turkish national living in Erzurum, was arrested by the police "
        "and held for twelve days at the station of the gendarmerie; he complained to the public prosecutor "
        "that he had not been told why he was held and that nobody had seen him during that period of time, "
        "and the matter was then taken up by the European Court of Human Rights in Strasbourg.")


@pytest.fixture(scope="module")
def nlp():
    return load_spacy(disable=PiiConfig().spacy_disable)


def ents(doc):
    return sorted((e.start_char, e.end_char, e.label_, e.text) for e in doc.ents)


def test_windows_cover_every_trigger_and_are_merged(nlp):
    w = 4
    win = NerWindows(nlp, context=w)
    doc = nlp.make_doc(TEXT)
    triggers = win.triggers(doc)
    assert {doc[i].text for i in triggers} >= {"3", "March", "2001", "Cengiz", "Polat", "Turkish", "twelve",
                                             "days", "period", "European", "Strasbourg"}
    assert "he" not in {doc[i].lower_ for i in triggers}
    windows = win.trigger_windows(doc)
    for i in triggers:
        assert any(a <= max(0, i - w) and min(len(doc), i + w + 1) <= b for a, b in windows)
    for (_, b1), (a2, _) in zip(windows, windows[1:]):
        assert a2 > b1  # disjoint, not touching (touching windows are merged)
    assert sum(b - a for a, b in windows) < len(doc)


def test_merging_boundary(nlp):
    w = 2
    win = NerWindows(nlp, context=w)
    # triggers 2w+1 apart: their windows touch and are merged; 2w+2 apart: one token between them
    touching = nlp.make_doc("a b c Xx d e f g Yy h i j")
    assert win.trigger_windows(touching) == [(1, 11)]
    apart = nlp.make_doc("a b c Xx d e f g h Yy i j k")
    assert win.trigger_windows(apart) == [(1, 6), (7, 12)]


def test_entities_map_back_to_exact_offsets(nlp):
    win = NerWindows(nlp, context=4)
    full = nlp.make_doc(TEXT)
    expected = []
    for a, b in win.trigger_windows(full):
        piece = nlp(full[a:b].text_with_ws)
        base = full[a].idx
        expected += [(e.start_char + base, e.end_char + base, e.label_, e.text) for e in piece.ents]
    got = win(TEXT)
    assert got.text == TEXT and len(got) == len(full)
    assert ents(got) == sorted(expected) and expected
    for s, e, _, surface in ents(got):
        assert TEXT[s:e] == surface
    assert all(t.ent_iob_ in ("B", "I", "O") for t in got)  # every token annotated, as after the full NER


def test_no_trigger_runs_no_ner(nlp):
    class Spy:
        def __init__(self, inner):
            self.inner, self.calls = inner, 0
            self.pipeline, self.vocab, self.make_doc = inner.pipeline, inner.vocab, inner.make_doc

        def pipe(self, docs, **kw):
            self.calls += 1
            return self.inner.pipe(docs, **kw)

    spy = Spy(nlp)
    win = NerWindows(spy, context=4)
    doc = win("the cat sat on the mat and then it slept, as cats do.")
    assert spy.calls == 0 and win.tokens_sent == 0 and not doc.ents
    assert all(t.ent_iob_ == "O" for t in doc)
    win("the cat met Mr Polat.")
    assert spy.calls == 1 and 0 < win.tokens_sent


def _paragraphs():
    if not TAB.exists():
        pytest.skip(f"TAB data not found at {TAB}")
    from anonstream.evaluation.tab import load_tab

    by_id = {d.doc_id: d for d in load_tab(TAB)}
    return [by_id[doc_id].text.split("\n")[k] for doc_id, k in PARAGRAPHS]


def test_equivalent_to_full_text_ner_on_tab_paragraphs(nlp):
    paragraphs = _paragraphs()
    win = NerWindows(nlp, context=4)
    windowed = list(win.docs(paragraphs))
    for text, doc, full in zip(paragraphs, windowed, nlp.pipe(paragraphs)):
        assert ents(full), "paragraph without entities: pick another"
        assert ents(doc) == ents(full)
    assert win.fraction_sent < 0.7  # the windows left out a good part of these paragraphs
    # the check can fail: windows narrower than the receptive field change the entities
    narrow = list(NerWindows(nlp, context=0).docs(paragraphs))
    assert any(ents(d) != ents(f) for d, f in zip(narrow, windowed))


def test_engine_paths_use_windows_and_match_full_text():
    on = PiiEngine.from_config(PiiConfig())
    off = PiiEngine.from_config(PiiConfig(ner_windows=False))
    assert on._windows is not None and on._windows.windowed and off._windows is None

    def key(spans):
        return [(s.start, s.end, s.type, s.identifier_type) for s in spans]

    assert key(on.detect(TEXT, DocumentEntities("a"))) == key(off.detect(TEXT, DocumentEntities("b")))
    many_on = on.detect_many([TEXT, TEXT[:80]], [DocumentEntities("c"), DocumentEntities("d")])
    many_off = off.detect_many([TEXT, TEXT[:80]], [DocumentEntities("e"), DocumentEntities("f")])
    assert [key(s) for s in many_on] == [key(s) for s in many_off]
    assert [(t["start"], t["end"], t["type"]) for t in on.explain(TEXT, DocumentEntities("g"))] == \
        [(t["start"], t["end"], t["type"]) for t in off.explain(TEXT, DocumentEntities("h"))]


def test_full_pipeline_is_not_windowed():
    full = load_spacy()  # tagger, parser...: must see the whole text
    assert not NerWindows(full).windowed
    assert ents(NerWindows(full)(TEXT)) == ents(full(TEXT))


def test_numpy_gemm_same_entities(nlp):
    blis = load_spacy(disable=PiiConfig().spacy_disable, numpy_gemm=False)
    assert blis is not nlp
    assert ents(blis(TEXT)) == ents(nlp(TEXT))
