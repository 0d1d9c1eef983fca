"""Sentence splitting and chunking (the ingest stage's text core).

Sentences come from spaCy's rule-based ``sentencizer`` on ``spacy.blank("en")``, run per line (a blank line or
a line break always ends a sentence), so headings and list items stay separate; ``sentencizer.py`` gives its
sentence starts without importing spaCy (which imports torch), so ingest and swap load no model library. Chunks are runs of
consecutive sentences; a chunk closes before it would exceed ``max_chars`` or ``max_sentences``, and
at a paragraph break once it holds at least half of ``max_chars``. Chunk boundaries are sentence
starts, and the whitespace after a sentence stays with it, so the chunks partition the text exactly.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .sentencizer import sentence_starts

_PARAGRAPH = re.compile(r"[^\n]+")


@dataclass(frozen=True, slots=True)
class Sentence:
    start: int
    end: int  # end of the sentence's last non-space character
    paragraph_start: bool  # the first sentence of a paragraph (after a blank line)


def split_sentences(text: str) -> list[Sentence]:
    sentences: list[Sentence] = []
    previous_end = 0
    for line in _PARAGRAPH.finditer(text):
        if not line.group().strip():
            continue
        blank_before = "\n\n" in text[previous_end:line.start()] or not sentences
        piece = line.group()
        starts = sentence_starts(piece)
        first = True
        for sent_start, sent_end in zip(starts, starts[1:] + [len(piece)]):
            sent_text = piece[sent_start:sent_end]
            stripped = sent_text.strip()
            if not stripped:
                continue
            start = line.start() + sent_start + (len(sent_text) - len(sent_text.lstrip()))
            if not first and _CONTINUES.match(stripped) and _ABBREVIATION_END.search(text[sentences[-1].start:
                                                                                           sentences[-1].end]):
                sentences[-1] = Sentence(sentences[-1].start, start + len(stripped), sentences[-1].paragraph_start)
                continue
            sentences.append(Sentence(start, start + len(stripped), blank_before and first))
            first = False
        previous_end = line.end()
    return sentences


# The sentencizer ends a sentence at every full stop; after a short abbreviation ("no.", "nos.", "pp.", "cf.") a
# "sentence" that starts with a digit or a lower-case letter continues the one before ("file no. | 2009/2802"): a
# number cut from its "no." is no longer read as a case number.
_ABBREVIATION_END = re.compile(r"(?:^|[\s(])[A-Za-z]{1,4}\.$")
_CONTINUES = re.compile(r"[0-9a-z]")


@dataclass(frozen=True, slots=True)
class ChunkSpan:
    start: int
    end: int
    sentence_count: int


def chunk_spans(text: str, max_chars: int, max_sentences: int) -> list[ChunkSpan]:
    """Partition ``text`` into chunks of whole sentences (see the module docstring)."""
    sentences = split_sentences(text)
    if not sentences:
        return [ChunkSpan(0, len(text), 0)]
    starts: list[tuple[int, int]] = []  # (chunk start sentence index, count)
    first, count = 0, 0
    for i, sentence in enumerate(sentences):
        if count:
            size = sentence.end - sentences[first].start
            half_full = sentences[i - 1].end - sentences[first].start >= max_chars // 2
            if size > max_chars or count >= max_sentences or (sentence.paragraph_start and half_full):
                starts.append((first, count))
                first, count = i, 0
        count += 1
    starts.append((first, count))
    spans = []
    for n, (index, count) in enumerate(starts):
        start = 0 if n == 0 else sentences[index].start
        end = len(text) if n == len(starts) - 1 else sentences[starts[n + 1][0]].start
        spans.append(ChunkSpan(start, end, count))
    return spans
