"""The re-identification attack harness on a small synthetic corpus and hand-made pairs."""
import json
import random

import pytest
from scipy.stats import binomtest

from anonstream.attack import harness as h
from anonstream.cli import main
from anonstream.pii.spacy_model import SpacyModelNotFound

PRODUCTS = {
    "AAA": ["Zorblax", "Quintrel", "Vexano"],
    "BBB": ["Mirovia", "Talquist", "Brenzor"],
    "CCC": ["Oxitane", "Pellucor", "Drambly"],
    "DDD": ["Gravanta", "Hollisk", "Yutrane"],
    "EEE": ["Sembrix", "Kalvoro", "Nuvetta"],
    "FFF": ["Ambrelo", "Cresswyn", "Lumidor"],
}
OPENERS = ["We", "Our", "The", "So", "And"]
FILLER = "revenue grew in the quarter and margins improved while demand stayed solid across regions".split()


def _text(ticker, rng, n_lines=40):
    lines = []
    for _ in range(n_lines):
        filler = rng.sample(FILLER, 6)
        lines.append(f"{rng.choice(OPENERS)} {rng.choice(PRODUCTS[ticker])} {' '.join(filler)}.")
    return "\n".join(lines)


def _sanitize(text):
    for names in PRODUCTS.values():
        for name in names:
            text = text.replace(name, "[Organization]")
    return text


def _corpus(seed, period):
    rng = random.Random(seed)
    return [{"doc_id": f"d-{t}-{period}", "text": _text(t, rng), "metadata": {"ticker": t, "period": period}}
            for t in PRODUCTS]


def _sanitized(records):
    return [{**r, "text": _sanitize(r["text"])} for r in records]


def _count_capitalized_stub(texts):
    return sum(len(h.capitalized_words(t).split()) for t in texts)


def test_attackers_accurate_before_capitalized_drops_after():
    train, test = h.to_docs(_corpus(1, "Q2")), h.to_docs(_corpus(2, "Q3"))
    sanitized = h.to_docs(_sanitized(_corpus(2, "Q3")))
    r = h.run_attack(train, test, sanitized, count_proper_nouns=_count_capitalized_stub)
    assert r.test_chunks == 6 * 8 and r.labels == 6
    for name in ("full", "capitalized"):
        assert r.attackers[name].accuracy_before >= 0.9
    cap = r.attackers["capitalized"]
    assert cap.paired_chunks == 48 and cap.accuracy_before_paired == cap.accuracy_before
    assert cap.accuracy_after <= 0.4 and cap.relative_drop >= 0.6
    assert cap.mcnemar.b >= 25 and cap.mcnemar.p_value < 1e-6
    # one token per line (the product name) is replaced by one placeholder
    lines = sum(len(d.lines) for d in test)
    tokens = sum(len(line.split()) for d in test for line in d.lines)
    assert (r.tokens_unchanged, r.tokens_raw) == (tokens - lines, tokens)
    assert r.placeholders_raw == 0 and r.placeholders_sanitized == r.placeholders_introduced == lines
    assert r.proper_nouns == _count_capitalized_stub(d.text for d in test)
    assert r.placeholders_per_proper_noun == pytest.approx(lines / r.proper_nouns)
    d = r.as_dict()
    assert d["targets"]["capitalized_relative_drop"]["met"] is True
    assert d["targets"]["tokens_unchanged_share"]["met"] is (r.tokens_unchanged_share >= 0.9)
    json.dumps(d)


def test_before_only_without_sanitized():
    r = h.run_attack(h.to_docs(_corpus(1, "Q2")), h.to_docs(_corpus(2, "Q3")), train_unit="document")
    assert r.alignment is None and r.attackers["full"].mcnemar is None
    assert r.train_samples == 6 and r.attackers["capitalized"].accuracy_before >= 0.9
    assert "targets" not in r.as_dict()


def test_mcnemar_hand_made():
    before = [True, True, True, False, False, True, False, True]
    after = [False, True, False, True, False, False, False, True]
    m = h.mcnemar(before, after)
    assert (m.b, m.c) == (3, 1)
    assert m.p_value == pytest.approx(binomtest(3, 4, 0.5).pvalue) == pytest.approx(0.625)
    assert h.mcnemar([True, False], [True, False]) == h.McNemar(0, 0, 1.0)
    with pytest.raises(ValueError):
        h.mcnemar([True], [True, False])


def test_tokens_unchanged_hand_made():
    raw = "Apple sold the Widget Pro in Paris ."
    san = "[Organization] sold the [Product] in [Location] ."
    assert h.tokens_unchanged(raw, san) == (4, 8)
    assert h.tokens_unchanged("a b c", "a b c") == (3, 3)
    assert h.tokens_unchanged("", "x") == (0, 0)


def test_misaligned_and_missing_documents_are_counted_and_excluded():
    test_records = _corpus(2, "Q3")
    sanitized = _sanitized(test_records)
    sanitized[0] = {**sanitized[0], "text": sanitized[0]["text"] + "\nan extra line"}  # misaligned
    missing_id = sanitized.pop(1)["doc_id"]  # missing
    sanitized.append({"doc_id": "not-in-test", "text": "x", "metadata": {"ticker": "AAA"}})  # extra
    sanitized.append(dict(sanitized[2]))  # a duplicate delivery
    test = h.to_docs(test_records)
    r = h.run_attack(h.to_docs(_corpus(1, "Q2")), test, h.to_docs(sanitized),
                     count_proper_nouns=_count_capitalized_stub)
    a = r.alignment
    assert a.misaligned == [test_records[0]["doc_id"]] and a.missing == [missing_id]
    assert a.extra == ["not-in-test"] and a.duplicates == 1 and len(a.paired) == 4
    assert r.attackers["full"].paired_chunks == 4 * 8 and r.test_chunks == 6 * 8
    paired = [d for d in test if d.doc_id in set(a.paired)]
    assert r.tokens_raw == sum(len(line.split()) for d in paired for line in d.lines)
    counts = r.as_dict()["alignment"]
    assert (counts["misaligned_documents"], counts["missing_documents"], counts["extra_documents"]) == (1, 1, 1)


def test_placeholders_ignore_unk():
    assert h.count_placeholders("<UNK> said [PERSON_3] met [Organization] at [Event] and [Public Body].") == 4
    assert h.count_placeholders("Thanks, <UNK>. [1] and [a-b] are not placeholders.") == 0
    raw = [{"doc_id": "d", "text": "Thanks, <UNK>.\nZorblax grew.", "metadata": {"ticker": "AAA"}}]
    san = [{"doc_id": "d", "text": "Thanks, <UNK>.\n[Organization] grew.", "metadata": {"ticker": "AAA"}}]
    r = h.run_attack(h.to_docs(_corpus(1, "Q2")), h.to_docs(raw), h.to_docs(san), count_proper_nouns=lambda t: 2)
    assert (r.placeholders_raw, r.placeholders_sanitized, r.placeholders_introduced) == (0, 1, 1)
    assert r.placeholders_per_proper_noun == 0.5


def test_chunks_and_capitalized_words():
    doc = h.Doc("d", "\n".join(["a"] * 5 + [""] * 5 + ["b", "c"]), "X")
    assert [start for start, _ in h.chunks(doc, 5)] == [0, 10]  # the blank chunk is skipped
    assert h.chunks(doc, 5)[1][1] == "b\nc"
    assert h.capitalized_words("So, Apple's iPhone (NYSE: AAPL) grew in the U.S.") == "So Apple's NYSE AAPL U.S"
    with pytest.raises(ValueError):
        h.chunks(doc, 0)


def test_unlabeled_documents_are_rejected():
    docs = h.to_docs([{"doc_id": "d", "text": "x", "metadata": {}}])
    with pytest.raises(ValueError):
        h.run_attack(docs, docs)


def test_split_by_period():
    records = [{"doc_id": "a", "ticker": "A", "period": "2016Q2", "text": "x", "metadata": {"ticker": "A"}},
               {"doc_id": "b", "text": "y", "metadata": {"ticker": "B", "period": "2016Q3"}}]
    groups = h.split_by(records)
    assert groups == {"2016Q2": [{"doc_id": "a", "text": "x", "metadata": {"ticker": "A", "period": "2016Q2"}}],
                      "2016Q3": [{"doc_id": "b", "text": "y", "metadata": {"ticker": "B", "period": "2016Q3"}}]}


def test_cli_split_then_attack(tmp_path, capsys):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in _corpus(1, "Q2") + _corpus(2, "Q3")))
    assert main(["attack", "split", "--corpus", str(corpus), "--out", str(tmp_path / "split")]) == 0
    q2, q3 = tmp_path / "split" / "Q2.jsonl", tmp_path / "split" / "Q3.jsonl"
    sanitized = tmp_path / "s.jsonl"
    sanitized.write_text("".join(json.dumps(r) + "\n" for r in _sanitized(_corpus(2, "Q3"))))
    out = tmp_path / "result.json"
    assert main(["attack", "--train", str(q2), "--test", str(q3), "--sanitized", str(sanitized),
                 "--json", str(out)]) == 0
    d = json.loads(out.read_text())
    assert d["alignment"]["paired_documents"] == 6 and d["placeholders"]["introduced"] == 6 * 40
    assert d["attackers"]["capitalized"]["accuracy_before"] >= 0.9
    assert d["attackers"]["capitalized"]["relative_drop"] >= 0.6
    capsys.readouterr()
    assert main(["attack", "run", "--train", str(q2), "--test", str(q3), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["test"]["chunks"] == 48


def test_spacy_proper_noun_counter_excludes_unk():
    try:
        count = h.spacy_proper_noun_counter()
    except SpacyModelNotFound:
        pytest.skip("spaCy model not installed")
    assert count(["Why don't you take this one, <UNK>."]) == 0
    assert count(["Agilent sold instruments in Paris and Tokyo."]) >= 3

