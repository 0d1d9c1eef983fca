"""Re-identification attack on a sanitized corpus: train a TF-IDF linear classifier on one corpus,
predict the label (e.g. the company) of consecutive line chunks of another, before and after
sanitization.

Attackers (``ATTACKERS``):

- ``full``: the whole chunk text;
- ``capitalized``: only the words that start with an uppercase letter (surrounding punctuation
  stripped). Sentence- and line-initial words are kept: a strong attacker keeps every capitalized
  word and lets the classifier learn that "So" or "We" carry nothing.

Both are ``TfidfVectorizer`` (word unigrams, sublinear tf) + ``LinearSVC`` (C=1), trained on the
training documents cut into chunks of the same ``lines_per_chunk`` lines as the test. On MAEC,
trained on 2016Q2 and tested on 5-line chunks of 2016Q3 (raw, 185 companies), that was the strongest
of the variants tried: full 0.432 / capitalized 0.291 vs. unigrams+bigrams 0.408 / 0.257 (``ngram_max=2``),
whole training documents 0.385 / 0.280, LogisticRegression(C=10) 0.303 / 0.212 (and 10-100x slower),
capitalized without line-initial words 0.273.

The sanitized corpus is paired with the test corpus by ``doc_id`` and line index (the pipeline keeps
line breaks). A sanitized document with another number of lines is *misaligned*, a test document
without a sanitized one is *missing*: both are counted and left out of every paired statistic.
"""
from __future__ import annotations

import difflib
import re
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

ATTACKERS = ("full", "capitalized")
TRAIN_UNITS = ("chunk", "document")
PLACEHOLDER_RE = re.compile(r"\[[A-Za-z_ ]+(?:_\d+)?\]")
TOKEN_RE = re.compile(r"\S+")
_EDGE_PUNCT = re.compile(r"^\W+|\W+$")
# Targets of issue 9 (item 5) the harness reports on.
TARGET_CAPITALIZED_RELATIVE_DROP = 0.60
TARGET_TOKENS_UNCHANGED_SHARE = 0.90
TARGET_PLACEHOLDERS_PER_PROPER_NOUN = 0.35


@dataclass(frozen=True)
class Doc:
    doc_id: str
    text: str
    label: str | None
    metadata: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")


def read_jsonl(path: str | Path) -> list[dict]:
    from .. import serde

    with open(path, "rb") as handle:
        return [serde.loads(line) for line in handle if line.strip()]


def to_docs(records: Iterable[dict], label_key: str = "ticker") -> list[Doc]:
    """Records {doc_id, text, metadata} -> Docs; the label is metadata[label_key] (else record[label_key])."""
    docs = []
    for record in records:
        metadata = record.get("metadata") or {}
        label = metadata.get(label_key, record.get(label_key))
        docs.append(Doc(str(record["doc_id"]), record["text"], None if label is None else str(label), metadata))
    return docs


def load_documents(path: str | Path, label_key: str = "ticker") -> list[Doc]:
    return to_docs(read_jsonl(path), label_key)


def chunk_starts(n_lines: int, lines_per_chunk: int) -> list[int]:
    if lines_per_chunk < 1:
        raise ValueError("lines_per_chunk must be >= 1")
    return list(range(0, n_lines, lines_per_chunk))


def chunk_text(lines: Sequence[str], start: int, lines_per_chunk: int) -> str:
    return "\n".join(lines[start:start + lines_per_chunk])


def chunks(doc: Doc, lines_per_chunk: int) -> list[tuple[int, str]]:
    """(first line index, text) of the consecutive chunks of ``doc``; blank chunks are skipped."""
    lines = doc.lines
    out = []
    for start in chunk_starts(len(lines), lines_per_chunk):
        text = chunk_text(lines, start, lines_per_chunk)
        if text.strip():
            out.append((start, text))
    return out


def capitalized_words(text: str) -> str:
    """The words of ``text`` that start with an uppercase letter, edge punctuation stripped, space-joined."""
    words = (_EDGE_PUNCT.sub("", token) for token in TOKEN_RE.findall(text))
    return " ".join(w for w in words if w and w[0].isupper())


def count_placeholders(text: str) -> int:
    """Bracketed placeholders (``[Organization]``, ``[PERSON_3]``); ``<UNK>`` is not one."""
    return len(PLACEHOLDER_RE.findall(text))


def tokens_unchanged(raw: str, sanitized: str) -> tuple[int, int]:
    """(raw tokens in equal blocks of a token-level diff, raw tokens); tokens are ``\\S+``."""
    a, b = TOKEN_RE.findall(raw), TOKEN_RE.findall(sanitized)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()), len(a)


@dataclass(frozen=True)
class McNemar:
    """Exact McNemar test. b: correct before and wrong after; c: wrong before and correct after."""
    b: int
    c: int
    p_value: float


def mcnemar(before: Sequence[bool], after: Sequence[bool]) -> McNemar:
    """Two-sided exact McNemar test on paired correct/incorrect outcomes (binomial on b of b + c)."""
    from scipy.stats import binomtest

    if len(before) != len(after):
        raise ValueError("paired outcomes must have the same length")
    b = sum(1 for x, y in zip(before, after) if x and not y)
    c = sum(1 for x, y in zip(before, after) if y and not x)
    p = 1.0 if b + c == 0 else float(binomtest(b, b + c, 0.5, alternative="two-sided").pvalue)
    return McNemar(b, c, p)


class Attacker:
    """TF-IDF (word 1..ngram_max-grams, sublinear tf) + LinearSVC on the full text or its capitalized words."""

    def __init__(self, kind: str = "full", seed: int = 0, C: float = 1.0, ngram_max: int = 1):
        if kind not in ATTACKERS:
            raise ValueError(f"unknown attacker {kind!r}; expected one of {ATTACKERS}")
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.pipeline import make_pipeline
        from sklearn.svm import LinearSVC

        self.kind = kind
        if kind == "full":
            vectorizer = TfidfVectorizer(ngram_range=(1, ngram_max), sublinear_tf=True)
        else:  # the reduced text is one capitalized word per token; keep the words whole
            vectorizer = TfidfVectorizer(ngram_range=(1, ngram_max), sublinear_tf=True, token_pattern=r"\S+",
                                         lowercase=False)
        self.model = make_pipeline(vectorizer, LinearSVC(C=C, random_state=seed))

    def view(self, texts: Iterable[str]) -> list[str]:
        return [capitalized_words(t) for t in texts] if self.kind == "capitalized" else list(texts)

    def fit(self, texts: Sequence[str], labels: Sequence[str]) -> "Attacker":
        with warnings.catch_warnings():  # one sample per label (train_unit="document") is intended
            warnings.filterwarnings("ignore", message="The number of unique classes")
            self.model.fit(self.view(texts), list(labels))
        return self

    def predict(self, texts: Sequence[str]) -> list[str]:
        if not texts:
            return []
        return [str(p) for p in self.model.predict(self.view(texts))]


@dataclass
class AttackerResult:
    name: str
    chunks: int
    accuracy_before: float
    paired_chunks: int | None = None
    accuracy_before_paired: float | None = None
    accuracy_after: float | None = None
    relative_drop: float | None = None
    mcnemar: McNemar | None = None


@dataclass
class Alignment:
    """How the sanitized corpus pairs with the test corpus (ids are the test corpus's doc_ids)."""
    sanitized_documents: int
    paired: list[str]
    misaligned: list[str]
    missing: list[str]
    extra: list[str]
    duplicates: int


@dataclass
class AttackResult:
    lines_per_chunk: int
    label_key: str
    train_unit: str
    seed: int
    ngram_max: int
    train_documents: int
    train_samples: int
    labels: int
    test_documents: int
    test_chunks: int
    test_documents_label_unseen: int
    attackers: dict[str, AttackerResult]
    alignment: Alignment | None = None
    tokens_raw: int | None = None
    tokens_unchanged: int | None = None
    placeholders_raw: int | None = None
    placeholders_sanitized: int | None = None
    proper_nouns: int | None = None

    @property
    def tokens_unchanged_share(self) -> float | None:
        if self.tokens_raw is None:
            return None
        return self.tokens_unchanged / self.tokens_raw if self.tokens_raw else 1.0

    @property
    def placeholders_introduced(self) -> int | None:
        if self.placeholders_raw is None:
            return None
        return self.placeholders_sanitized - self.placeholders_raw

    @property
    def placeholders_per_proper_noun(self) -> float | None:
        if self.placeholders_raw is None or self.proper_nouns is None:
            return None
        return self.placeholders_introduced / self.proper_nouns if self.proper_nouns else None

    def targets(self) -> dict[str, dict[str, Any]]:
        """The issue's targets: value, threshold and whether met (None: not measured)."""
        cap = self.attackers.get("capitalized")
        rows = {
            "capitalized_relative_drop": (cap.relative_drop if cap else None, ">=", TARGET_CAPITALIZED_RELATIVE_DROP),
            "tokens_unchanged_share": (self.tokens_unchanged_share, ">=", TARGET_TOKENS_UNCHANGED_SHARE),
            "placeholders_per_proper_noun": (self.placeholders_per_proper_noun, "<=",
                                             TARGET_PLACEHOLDERS_PER_PROPER_NOUN),
        }
        out = {}
        for name, (value, op, threshold) in rows.items():
            met = None if value is None else (value >= threshold if op == ">=" else value <= threshold)
            out[name] = {"value": value, "op": op, "threshold": threshold, "met": met}
        return out

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "config": {"lines_per_chunk": self.lines_per_chunk, "label_key": self.label_key,
                       "train_unit": self.train_unit, "seed": self.seed,
                       "ngram_max": self.ngram_max,
                       "model": f"TfidfVectorizer(1-{self.ngram_max} word grams, sublinear_tf) + LinearSVC(C=1)"},
            "train": {"documents": self.train_documents, "samples": self.train_samples, "labels": self.labels,
                      "chance_accuracy": 1 / self.labels if self.labels else None},
            "test": {"documents": self.test_documents, "chunks": self.test_chunks,
                     "documents_label_unseen_in_train": self.test_documents_label_unseen},
            "attackers": {name: asdict(r) for name, r in self.attackers.items()},
        }
        if self.alignment is not None:
            a = self.alignment
            out["alignment"] = {"sanitized_documents": a.sanitized_documents, "paired_documents": len(a.paired),
                                "misaligned_documents": len(a.misaligned), "missing_documents": len(a.missing),
                                "extra_documents": len(a.extra), "duplicate_documents": a.duplicates,
                                "misaligned_ids": a.misaligned, "missing_ids": a.missing}
            out["tokens"] = {"raw": self.tokens_raw, "unchanged": self.tokens_unchanged,
                             "unchanged_share": self.tokens_unchanged_share}
            out["placeholders"] = {"raw": self.placeholders_raw, "sanitized": self.placeholders_sanitized,
                                   "introduced": self.placeholders_introduced, "proper_nouns": self.proper_nouns,
                                   "per_proper_noun": self.placeholders_per_proper_noun}
            out["targets"] = self.targets()
        return out


def align(test: Sequence[Doc], sanitized: Sequence[Doc]) -> tuple[Alignment, dict[str, Doc]]:
    """Pair sanitized documents with test documents by doc_id; same number of lines required."""
    by_id: dict[str, Doc] = {}
    duplicates = 0
    for doc in sanitized:
        if doc.doc_id in by_id:
            duplicates += 1  # at-least-once delivery can repeat a document: keep the first
            continue
        by_id[doc.doc_id] = doc
    test_ids = {d.doc_id for d in test}
    paired, misaligned, missing = [], [], []
    for doc in test:
        other = by_id.get(doc.doc_id)
        if other is None:
            missing.append(doc.doc_id)
        elif len(other.lines) != len(doc.lines):
            misaligned.append(doc.doc_id)
        else:
            paired.append(doc.doc_id)
    extra = sorted(i for i in by_id if i not in test_ids)
    return Alignment(len(sanitized), paired, misaligned, missing, extra, duplicates), by_id


def spacy_proper_noun_counter(model: str | None = None, batch_size: int = 16) -> Callable[[Iterable[str]], int]:
    """A function counting spaCy PROPN tokens of texts (tagger only; the corpus's ``<UNK>`` masks excluded)."""
    from ..pii.spacy_model import load_spacy

    nlp = load_spacy(model, disable=("parser", "ner", "lemmatizer"))

    def count(texts: Iterable[str]) -> int:
        total = 0
        for doc in nlp.pipe(texts, batch_size=batch_size):
            for i, token in enumerate(doc):
                if token.pos_ != "PROPN":
                    continue
                if (token.text == "UNK" and 0 < i < len(doc) - 1
                        and doc[i - 1].text == "<" and doc[i + 1].text == ">"):
                    continue
                total += 1
        return total

    return count


def _check_unique(docs: Sequence[Doc], what: str) -> None:
    ids = [d.doc_id for d in docs]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{what} corpus has duplicate doc_ids")


def run_attack(train: Sequence[Doc], test: Sequence[Doc], sanitized: Sequence[Doc] | None = None, *,
               lines_per_chunk: int = 5, label_key: str = "ticker", attackers: Sequence[str] = ATTACKERS,
               train_unit: str = "chunk", ngram_max: int = 1, seed: int = 0,
               count_proper_nouns: Callable[[Iterable[str]], int] | None = None) -> AttackResult:
    """Train each attacker on ``train``, score it on the test chunks and (if given) the aligned sanitized
    chunks. ``count_proper_nouns`` defaults to spaCy's tagger (only used with ``sanitized``)."""
    if train_unit not in TRAIN_UNITS:
        raise ValueError(f"unknown train_unit {train_unit!r}; expected one of {TRAIN_UNITS}")
    for what, docs in (("train", train), ("test", test)):
        _check_unique(docs, what)
        unlabeled = sum(1 for d in docs if d.label is None)
        if unlabeled:
            raise ValueError(f"{unlabeled} {what} documents have no label {label_key!r}")

    if train_unit == "chunk":
        samples = [(text, d.label) for d in train for _, text in chunks(d, lines_per_chunk)]
    else:
        samples = [(d.text, d.label) for d in train if d.text.strip()]
    train_texts, train_labels = [s[0] for s in samples], [s[1] for s in samples]
    known = set(train_labels)

    test_items = [(d, start, text) for d in test for start, text in chunks(d, lines_per_chunk)]
    raw_texts = [text for _, _, text in test_items]
    gold = [d.label for d, _, _ in test_items]

    alignment = None
    paired_index: list[int] = []
    san_texts: list[str] = []
    if sanitized is not None:
        alignment, san_by_id = align(test, sanitized)
        paired_ids = set(alignment.paired)
        for i, (d, start, _) in enumerate(test_items):
            if d.doc_id in paired_ids:
                paired_index.append(i)
                san_texts.append(chunk_text(san_by_id[d.doc_id].lines, start, lines_per_chunk))

    results: dict[str, AttackerResult] = {}
    for name in attackers:
        attacker = Attacker(name, seed=seed, ngram_max=ngram_max).fit(train_texts, train_labels)
        before = [p == g for p, g in zip(attacker.predict(raw_texts), gold)]
        result = AttackerResult(name, len(before), _mean(before))
        if sanitized is not None:
            before_paired = [before[i] for i in paired_index]
            after = [p == gold[i] for p, i in zip(attacker.predict(san_texts), paired_index)]
            result.paired_chunks = len(after)
            result.accuracy_before_paired = _mean(before_paired)
            result.accuracy_after = _mean(after)
            if result.accuracy_before_paired:
                result.relative_drop = 1 - result.accuracy_after / result.accuracy_before_paired
            result.mcnemar = mcnemar(before_paired, after)
        results[name] = result

    out = AttackResult(
        lines_per_chunk=lines_per_chunk, label_key=label_key, train_unit=train_unit, seed=seed, ngram_max=ngram_max,
        train_documents=len(train), train_samples=len(samples), labels=len(known), test_documents=len(test),
        test_chunks=len(test_items), test_documents_label_unseen=sum(1 for d in test if d.label not in known),
        attackers=results, alignment=alignment)
    if sanitized is not None:
        test_by_id = {d.doc_id: d for d in test}
        pairs = [(test_by_id[i], san_by_id[i]) for i in alignment.paired]
        equal = total = 0
        for raw_doc, san_doc in pairs:
            for raw_line, san_line in zip(raw_doc.lines, san_doc.lines):
                e, t = tokens_unchanged(raw_line, san_line)
                equal, total = equal + e, total + t
        out.tokens_unchanged, out.tokens_raw = equal, total
        out.placeholders_raw = sum(count_placeholders(r.text) for r, _ in pairs)
        out.placeholders_sanitized = sum(count_placeholders(s.text) for _, s in pairs)
        counter = count_proper_nouns or spacy_proper_noun_counter()
        out.proper_nouns = counter(r.text for r, _ in pairs)
    return out


def _mean(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def split_by(records: Iterable[dict], key: str = "period") -> dict[str, list[dict]]:
    """Group records by metadata[key] (else record[key]) as pipeline input documents {doc_id, text, metadata}."""
    groups: dict[str, list[dict]] = {}
    for record in records:
        metadata = dict(record.get("metadata") or {})
        value = metadata.get(key, record.get(key))
        if value is None:
            raise ValueError(f"record without {key!r}")
        metadata.setdefault(key, value)
        groups.setdefault(str(value), []).append(
            {"doc_id": str(record["doc_id"]), "text": record["text"], "metadata": metadata})
    return groups
