import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from anonstream.segment import chunk_spans, split_sentences

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample" / "tab-train-100.jsonl"


def test_chunks_partition_real_documents_exactly():
    for line in SAMPLE.read_text().splitlines()[:20]:
        text = json.loads(line)["text"]
        spans = chunk_spans(text, 1200, 8)
        assert "".join(text[s.start:s.end] for s in spans) == text
        assert all(s.sentence_count <= 8 for s in spans)
        assert len(spans) > 1


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab .\n?!XY"), max_size=400), st.integers(10, 200), st.integers(1, 5))
def test_chunks_partition_any_text(text, max_chars, max_sentences):
    spans = chunk_spans(text, max_chars, max_sentences)
    assert "".join(text[s.start:s.end] for s in spans) == text
    assert spans[0].start == 0 and spans[-1].end == len(text)


def test_line_breaks_end_sentences_and_paragraphs_are_flagged():
    text = "PROCEDURE\n\nThe case began. It went on.\nA list item\n\nTHE FACTS"
    sentences = [text[s.start:s.end] for s in split_sentences(text)]
    assert sentences == ["PROCEDURE", "The case began.", "It went on.", "A list item", "THE FACTS"]
    flags = [s.paragraph_start for s in split_sentences(text)]
    assert flags == [True, True, False, False, True]


def test_chunks_close_at_the_size_bound():
    text = " ".join(f"Sentence number {i} is here." for i in range(40))
    spans = chunk_spans(text, 120, 100)
    assert all(s.end - s.start <= 121 for s in spans[:-1])


@pytest.mark.parametrize("text, expected", [
    ("The amount was paid (file no. 2009/2802). In March 2007 he left.",
     ["The amount was paid (file no. 2009/2802).", "In March 2007 he left."]),
    ("See applications nos. 123/02 and 456/03. Then it ended.", ["See applications nos. 123/02 and 456/03.",
                                                                  "Then it ended."]),
    ("It ended. 2010 was hard.", ["It ended.", "2010 was hard."]),  # a word of five letters is no abbreviation
    ("Mr. Smith came. He left.", ["Mr. Smith came.", "He left."]),
])
def test_a_number_after_a_short_abbreviation_continues_the_sentence(text, expected):
    assert [text[s.start:s.end] for s in split_sentences(text)] == expected
