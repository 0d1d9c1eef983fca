"""The two-stage identification probability of paper 003 §4.3 (eq. 6-9) over M synthetic copies, with the
stylometric features of §2.2(b), for the synthesis harness and the audit stage.

An intruder holds, for an identified person z, a writing sample x_z and the fields y_z it knows. Stage 1
keeps the released records whose (synthetic) fields equal y_z (eq. 7); stage 2 shares the probability
among them by 1 / L1 distance of standardized style vectors (eq. 8-9; ``kanon.identification_probability``).
The risk of a target is the probability of its true record, averaged over the M copies (0 in a copy where
the true record's fields no longer match). The unprotected baseline is the same with the true fields.

Style features, computed on the raw text (case, digits and punctuation kept), as additive counts so that a
document's chunks can be summed: word counts (hashed into ``WORD_BUCKETS`` columns, so no vocabulary has to
be shared: the paper's "every word"), the 13 punctuation marks, function words (the paper's list of 174 is
not given: scikit-learn's English stop-word list stands in), letters a-z, digits 0-9, words, mixed-case
words, word lengths 1..30, sentences and syllables; ``style_features`` turns them into frequencies and adds
Yule's K and the Flesch-Kincaid grade.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Hashable, Sequence

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, HashingVectorizer

from .kanon import identification_probability

__all__ = ["IdentificationResult", "style_counts", "style_features", "two_stage_risk"]

WORD_BUCKETS = 2 ** 12
PUNCTUATION = "!.?#@$%&,;:()"
FUNCTION_WORDS = tuple(sorted(ENGLISH_STOP_WORDS))
_FUNCTION_INDEX = {w: i for i, w in enumerate(FUNCTION_WORDS)}
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_SENTENCE_END = re.compile(r"[.!?]+(?:\s|$)")
_VOWEL_GROUPS = re.compile(r"[aeiouy]+")
_hasher = HashingVectorizer(n_features=WORD_BUCKETS, lowercase=False, token_pattern=_WORD.pattern,
                            alternate_sign=False, norm=None)
# column blocks of the count vector
_P0 = WORD_BUCKETS
_F0 = _P0 + len(PUNCTUATION)
_L0 = _F0 + len(FUNCTION_WORDS)
_D0 = _L0 + 26
_N = _D0 + 10            # words
_MIXED, _LEN0 = _N + 1, _N + 2
_SENT, _SYL = _LEN0 + 30, _LEN0 + 31
COUNT_DIM = _SYL + 1


def style_counts(text: str) -> np.ndarray:
    """Additive style counts of one text (see the module docstring for the columns)."""
    v = np.zeros(COUNT_DIM)
    v[:WORD_BUCKETS] = _hasher.transform([text]).toarray()[0]
    for i, ch in enumerate(PUNCTUATION):
        v[_P0 + i] = text.count(ch)
    words = _WORD.findall(text)
    lower = text.lower()
    for i, letter in enumerate("abcdefghijklmnopqrstuvwxyz"):
        v[_L0 + i] = lower.count(letter)
    for d in range(10):
        v[_D0 + d] = text.count(str(d))
    v[_N] = len(words)
    for w in words:
        lw = w.lower()
        if lw in _FUNCTION_INDEX:
            v[_F0 + _FUNCTION_INDEX[lw]] += 1
        if w != lw and w != w.upper():
            v[_MIXED] += 1
        v[_LEN0 + min(len(w), 30) - 1] += 1
        if w.isalpha():
            v[_SYL] += max(1, len(_VOWEL_GROUPS.findall(lw)))
    v[_SENT] = max(1, len(_SENTENCE_END.findall(text)))
    return v


def style_features(counts: np.ndarray) -> np.ndarray:
    """Frequencies per word (per character for letters, digits and punctuation), the word count, Yule's
    K = 10^4 (sum_m m^2 V_m - N) / N^2 (on the hashed word counts) and the Flesch-Kincaid grade
    0.39 words/sentences + 11.8 syllables/words - 15.59, one row per count row."""
    C = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    words = np.maximum(C[:, [_N]], 1.0)
    chars = np.maximum(C[:, _P0:_F0].sum(axis=1, keepdims=True) + C[:, _L0:_N].sum(axis=1, keepdims=True), 1.0)
    hashed = C[:, :WORD_BUCKETS]
    tokens = np.maximum(hashed.sum(axis=1), 1.0)
    yule = 1e4 * ((hashed ** 2).sum(axis=1) - tokens) / tokens ** 2
    grade = 0.39 * C[:, _N] / C[:, _SENT].clip(min=1) + 11.8 * C[:, _SYL] / words[:, 0] - 15.59
    return np.hstack([hashed / words, C[:, _P0:_F0] / chars, C[:, _F0:_L0] / words, C[:, _L0:_D0] / chars,
                      C[:, _D0:_N] / chars, C[:, [_N]], C[:, [_MIXED]] / words, C[:, _LEN0:_SENT] / words,
                      yule[:, None], grade[:, None]])


@dataclass(frozen=True)
class IdentificationResult:
    """Per-target risk (mean over the copies) and its summary against ``threshold``."""

    per_target: list[float]
    copies: int
    threshold: float

    @property
    def mean(self) -> float:
        return float(np.mean(self.per_target)) if self.per_target else 0.0

    @property
    def max(self) -> float:
        return float(np.max(self.per_target)) if self.per_target else 0.0

    @property
    def share_above(self) -> float:
        return float(np.mean([p > self.threshold for p in self.per_target])) if self.per_target else 0.0

    def as_dict(self) -> dict:
        return {"targets": len(self.per_target), "copies": self.copies, "mean": self.mean, "max": self.max,
                "threshold": self.threshold, "share_above_threshold": self.share_above}


def two_stage_risk(copies: Sequence[Sequence[Hashable]], release_features: np.ndarray,
                   targets: Sequence[tuple[int, Hashable, np.ndarray]], threshold: float = 0.09,
                   standardize: str | None = "document") -> IdentificationResult:
    """``copies[m][i]``: record i's released known-field tuple in copy m (one copy of true values gives the
    unprotected baseline); ``targets``: (index of the true record, the intruder's y_z, style features of x_z).
    Each target's risk is eq. 9 for its true record, averaged over the copies (paper 003 §4.3)."""
    if not copies:
        raise ValueError("at least one copy")
    per_target = []
    for true_index, known, features in targets:
        per_target.append(float(np.mean([
            identification_probability(list(copy), known, true_index, release_features, features, standardize)
            for copy in copies])))
    return IdentificationResult(per_target, len(copies), threshold)
