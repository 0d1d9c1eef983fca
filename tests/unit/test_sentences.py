"""The sentence splitter without spaCy (sentencizer.py, spacy_files.py) gives spaCy's tokens and sentences.

The reference is what segment.py ran before: ``spacy.blank("en")`` with the ``sentencizer`` pipe, per line. The
comparison covers the bundled TAB sample, samples of the shared corpora when present (TAB dev and train, earnings
calls, Wikipedia biographies), and generated strings of the characters the tokenizer's rules turn on.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from anonstream import segment
from anonstream.sentencizer import sentence_starts, tokenizer
from anonstream.spacy_files import english_stop_words, english_tokenizer_rules

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "data"
LINE = re.compile(r"[^\n]+")

spacy = pytest.importorskip("spacy")


@pytest.fixture(scope="module")
def nlp():
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def _texts_of(path: Path, every: int = 1, limit: int | None = None) -> list[str]:
    if not path.exists():
        return []
    if path.suffix == ".jsonl":
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    else:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = list(data.values()) if isinstance(data, dict) else data
    texts = [r if isinstance(r, str) else r["text"] for r in rows[::every]]
    return texts[:limit]


CORPORA = {
    "tab-sample": (REPO / "data" / "sample" / "tab-train-100.jsonl", 1, None),
    "tab-dev": (SHARED / "tab" / "dev-stopgap" / "TAB_dev_texts.json", 3, None),
    "echr-train": (SHARED / "tab" / "echr_train_first100.json", 4, None),
    "earnings": (SHARED / "earnings" / "maec-2016q2-q3.jsonl", 40, None),
    "wikibio": (SHARED / "wikibio" / "wiki_test.json", 1, None),
}


def _reference_split(nlp, text: str) -> list[tuple[int, int, bool]]:
    """segment.split_sentences as it was with spaCy's sentencizer (the same post-processing)."""
    sentences: list[list] = []
    previous_end = 0
    for line in LINE.finditer(text):
        if not line.group().strip():
            continue
        blank_before = "\n\n" in text[previous_end:line.start()] or not sentences
        first = True
        for sent in nlp(line.group()).sents:
            stripped = sent.text.strip()
            if not stripped:
                continue
            start = line.start() + sent.start_char + (len(sent.text) - len(sent.text.lstrip()))
            if not first and segment._CONTINUES.match(stripped) and segment._ABBREVIATION_END.search(
                    text[sentences[-1][0]:sentences[-1][1]]):
                sentences[-1][1] = start + len(stripped)
                continue
            sentences.append([start, start + len(stripped), blank_before and first])
            first = False
        previous_end = line.end()
    return [tuple(s) for s in sentences]


def test_the_rules_read_from_spacys_files_are_spacys():
    t = spacy.blank("en").tokenizer
    rules = english_tokenizer_rules()
    for ours, theirs in ((rules.prefix_search, t.prefix_search), (rules.suffix_search, t.suffix_search),
                         (rules.infix_finditer, t.infix_finditer), (rules.url_match, t.url_match)):
        assert ours.__self__.pattern == theirs.__self__.pattern
        assert ours.__self__.flags == theirs.__self__.flags
    orth = spacy.attrs.ORTH
    assert rules.special_cases == {k: tuple(d.get(orth, d.get("ORTH")) for d in v) for k, v in t.rules.items()}
    from spacy.lang.en.stop_words import STOP_WORDS

    assert english_stop_words() == frozenset(STOP_WORDS)


@pytest.mark.parametrize("corpus", list(CORPORA))
def test_tokens_sentences_and_splits_are_spacys_on_real_text(nlp, corpus):
    path, every, limit = CORPORA[corpus]
    texts = _texts_of(path, every, limit)
    if not texts:
        pytest.skip(f"{path} not present")
    lines = 0
    for text in texts:
        for line in LINE.finditer(text):
            doc = nlp(line.group())
            assert tokenizer()(line.group()) == [(t.text, t.idx) for t in doc], line.group()[:200]
            assert sentence_starts(line.group()) == [s.start_char for s in doc.sents]
            lines += 1
        assert [(s.start, s.end, s.paragraph_start) for s in segment.split_sentences(text)] == \
            _reference_split(nlp, text)
    assert lines >= 50


TRICKY = st.sampled_from(list("aAbZz09 .,;:!?'\"()[]-–—/\\$%&*+<>=@#…’“”\t\u00a0。！")
                         + ["Mr.", "no.", "U.S.", "a.m.", "e.g.", ":)", ":-)", "<3", "http://x.com/a.b", "don't",
                            "'s", "p.m.", "A.", "etc.", "1.5", "°C.", "km.", "Inc.", "C++", "...", "  ", "o.O"])


@settings(max_examples=400, deadline=None)
@given(st.lists(TRICKY, min_size=1, max_size=30).map("".join))
def test_tokens_and_sentences_are_spacys_on_generated_text(nlp, text):
    doc = nlp(text)
    assert tokenizer()(text) == [(t.text, t.idx) for t in doc]
    assert sentence_starts(text) == [s.start_char for s in doc.sents]


def test_reading_the_rules_imports_no_spacy():
    import subprocess
    import sys

    probe = ("import sys; from anonstream.segment import split_sentences; from anonstream.spacy_files import "
             "english_stop_words; split_sentences('Mr. Smith came. He left (no. 5).'); english_stop_words(); "
             "print([m for m in ('spacy', 'thinc', 'torch') if m in sys.modules] + "
             "[m for m in sys.modules if m.startswith('_anonstream_spacy_files')])")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
