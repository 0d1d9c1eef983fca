"""TAB evaluation (Pilán et al. 2022, Text Anonymization Benchmark), reimplemented from the definitions
of TAB's ``evaluation.py`` (commit c5246a2) as described in ``shared/data/tab/FORMAT.md`` §3 and in the
paper-001 digest §4 (R_direct = ER_di, R_quasi = ER_qi, P, P_w). No TAB code is copied.

* Gold: per document and annotator, mentions are grouped by ``entity_id`` into entities. ``entity_type`` and
  ``is_direct`` come from the entity's first mention; ``need_masking`` is the first mention's flag
  (DIRECT/QUASI) and is forced to True when the mentions disagree. Entities are pooled over annotators.
* A gold span counts as masked when every character is covered by the system's masked offsets, except
  characters of spaCy tokens with POS ADP/PART/CCONJ/DET or lower text in {mr, mrs, ms, no, nr, about}, and
  the characters `` ,.-;:/&()[]–'"’“”`` (``is_mention_masked``).
* Recall (token, mention, entity — DIRECT, QUASI, all) and precision (token, mention; uniform or weighted)
  are micro-averaged over annotators: counts are pooled across annotators and documents.
* Precision: each system unit (``\\w+`` token, or the whole span) earns ``w * k`` over ``w * A`` where ``A`` is
  the number of annotators with at least one entity in the document and ``k`` the number of annotators
  having a mask-needed mention that fully contains the unit.

Weighted precision: TAB weights units by BERT (bert-base-uncased) masked-LM information content. No BERT
model is available offline here, so ``UnigramICWeighting`` gives a clearly different, context-free proxy:
``w = -ln p(word)`` with p the unigram frequency from the ``wordfreq`` package (min over the unit's words,
floor 1e-9). It is reported as ``weighted_token_precision_unigram_ic``, never as the BERT number.
"""
from __future__ import annotations

import bisect
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

_WORD = re.compile(r"\w+")
_IGNORE_CHARS = set(" ,.-;:/&()[]–'\"’“”")
_IGNORE_POS = {"ADP", "PART", "CCONJ", "DET"}
_IGNORE_WORDS = {"mr", "mrs", "ms", "no", "nr", "about"}
MASK_FLAGS = ("DIRECT", "QUASI")


# ---------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------
@dataclass
class GoldMention:
    mention_id: str
    entity_id: str
    entity_type: str
    identifier_type: str
    start: int
    end: int
    span_text: str
    confidential_status: str = "NOT_CONFIDENTIAL"


@dataclass
class TabDocument:
    doc_id: str
    text: str
    task: str = ""
    dataset_type: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    quality_checked: list[str] | bool = field(default_factory=list)
    annotations: dict[str, list[GoldMention]] = field(default_factory=dict)

    @property
    def annotators(self) -> list[str]:
        return list(self.annotations)


def decode_articles(articles: Any) -> list[int]:
    """``meta.articles`` as ints, from either form (FORMAT.md §1): official int lists, or the UTF-8
    character codes of a JSON string such as ``'["6", "41"]'`` (HF/CSV-derived copies)."""
    if not articles:
        return []
    if all(isinstance(a, int) for a in articles):
        # character codes always start with '[' (91); plain article numbers never form valid JSON this way
        if articles[0] == 91 and articles[-1] == 93:
            try:
                decoded = json.loads(bytes(articles).decode("utf-8"))
                return [int(str(x).strip()) for x in decoded if str(x).strip().lstrip("-").isdigit()]
            except (ValueError, UnicodeDecodeError):
                pass
        return list(articles)
    return [int(a) for a in articles if str(a).strip().isdigit()]


def parse_document(obj: Mapping[str, Any], check_offsets: bool = True) -> TabDocument:
    text = obj["text"]
    meta = dict(obj.get("meta") or {})
    if "articles" in meta:
        meta["articles"] = decode_articles(meta["articles"])
    qc = obj.get("quality_checked", [])
    if not isinstance(qc, (list, bool)):
        qc = bool(qc)
    annotations: dict[str, list[GoldMention]] = {}
    for annotator, layer in (obj.get("annotations") or {}).items():
        mentions = []
        for m in layer.get("entity_mentions", []):
            s, e = int(m["start_offset"]), int(m["end_offset"])
            if not 0 <= s < e <= len(text):
                raise ValueError(f"{obj['doc_id']}: mention {m.get('entity_mention_id')} has bad offsets {s}-{e}")
            if check_offsets and m.get("span_text") is not None and text[s:e] != m["span_text"]:
                raise ValueError(f"{obj['doc_id']}: mention {m.get('entity_mention_id')} text mismatch")
            mentions.append(
                GoldMention(
                    mention_id=m.get("entity_mention_id", ""),
                    entity_id=m["entity_id"],
                    entity_type=m["entity_type"],
                    identifier_type=m["identifier_type"],
                    start=s,
                    end=e,
                    span_text=m.get("span_text", text[s:e]),
                    confidential_status=m.get("confidential_status", "NOT_CONFIDENTIAL"),
                )
            )
        annotations[annotator] = mentions
    return TabDocument(
        doc_id=obj["doc_id"],
        text=text,
        task=obj.get("task", ""),
        dataset_type=obj.get("dataset_type", ""),
        meta=meta,
        quality_checked=qc,
        annotations=annotations,
    )


def load_tab(path: str | Path) -> list[TabDocument]:
    """Load a TAB-format file: official ``echr_*.json``, derived copies, or the Wikipedia biographies
    (``wiki_test.json``: no meta, no quality_checked)."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if isinstance(data, dict):  # {doc_id: doc} variants
        data = [dict(v, doc_id=v.get("doc_id", k)) for k, v in data.items()]
    return [parse_document(obj) for obj in data]


def protected_person(doc: TabDocument) -> str:
    """Name of the person to protect, from meta.applicant or the ``task`` line."""
    if doc.meta.get("applicant"):
        return str(doc.meta["applicant"])
    m = re.search(r"(?:person|individual|main person)\s*:\s*(.+)$", doc.task.strip(), re.I)
    return m.group(1).strip() if m else ""


# ---------------------------------------------------------------------------------------------
# Gold entities
# ---------------------------------------------------------------------------------------------
@dataclass
class GoldEntity:
    entity_id: str
    annotator: str
    entity_type: str
    is_direct: bool
    need_masking: bool
    mentions: list[tuple[int, int]] = field(default_factory=list)
    mention_needs_mask: list[bool] = field(default_factory=list)


def gold_entities(doc: TabDocument) -> list[GoldEntity]:
    entities: dict[str, GoldEntity] = {}
    for annotator, mentions in doc.annotations.items():
        for m in mentions:
            flag = m.identifier_type in MASK_FLAGS
            ent = entities.get(m.entity_id)
            if ent is None:
                ent = GoldEntity(m.entity_id, annotator, m.entity_type, m.identifier_type == "DIRECT", flag)
                entities[m.entity_id] = ent
            elif ent.annotator != annotator:
                raise ValueError(f"{doc.doc_id}: entity id {m.entity_id} used by two annotators")
            elif flag != ent.need_masking:
                ent.need_masking = True
            ent.mentions.append((m.start, m.end))
            ent.mention_needs_mask.append(flag)
    return list(entities.values())


# ---------------------------------------------------------------------------------------------
# Token weighting
# ---------------------------------------------------------------------------------------------
class TokenWeighting:
    name = "uniform"

    def weights(self, text: str, units: Sequence[tuple[int, int]]) -> list[float]:
        return [1.0] * len(units)


class UnigramICWeighting(TokenWeighting):
    """Context-free information content ``-ln p(word)`` (wordfreq 'en' unigram frequencies); a stand-in
    for TAB's BERT weighting, which needs bert-base-uncased (not available offline)."""

    name = "unigram_ic"

    def __init__(self, floor: float = 1e-9):
        try:
            from wordfreq import word_frequency
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise RuntimeError("UnigramICWeighting needs the 'wordfreq' package") from exc
        self._freq = word_frequency
        self.floor = floor
        self._cache: dict[str, float] = {}

    def _ic(self, word: str) -> float:
        w = word.lower()
        got = self._cache.get(w)
        if got is None:
            got = -math.log(max(self._freq(w, "en"), self.floor))
            self._cache[w] = got
        return got

    def weights(self, text: str, units: Sequence[tuple[int, int]]) -> list[float]:
        out = []
        for s, e in units:
            words = _WORD.findall(text[s:e])
            out.append(max((self._ic(w) for w in words), default=0.0))
        return out


# ---------------------------------------------------------------------------------------------
# Per-document evaluator
# ---------------------------------------------------------------------------------------------
def split_by_tokens(text: str, start: int, end: int) -> list[tuple[int, int]]:
    return [(start + m.start(), start + m.end()) for m in _WORD.finditer(text[start:end])]


class GoldDocument:
    """A gold document prepared for scoring: entities, spaCy parse for the forgiveness rule."""

    def __init__(self, doc: TabDocument, spacy_doc: Any):
        self.doc = doc
        self.text = doc.text
        self.spacy_doc = spacy_doc
        self.entities = gold_entities(doc)
        self.nb_annotators = len({e.annotator for e in self.entities})
        masked = []
        for ent in self.entities:
            if ent.need_masking:
                for (s, e), flag in zip(ent.mentions, ent.mention_needs_mask):
                    if flag:
                        masked.append((s, e, ent.annotator))
        masked.sort()
        self._masked = masked
        self._masked_starts = [m[0] for m in masked]
        self._forgivable: set[int] | None = None

    def _forgivable_offsets(self) -> set[int]:
        if self._forgivable is None:
            forg: set[int] = set()
            for tok in self.spacy_doc:
                if tok.pos_ in _IGNORE_POS or tok.lower_ in _IGNORE_WORDS:
                    forg.update(range(tok.idx, tok.idx + len(tok.text)))
            self._forgivable = forg
        return self._forgivable

    def is_mention_masked(self, masked_offsets: set[int], start: int, end: int) -> bool:
        left = [i for i in range(start, end) if i not in masked_offsets]
        if not left:
            return True
        span = self.spacy_doc.char_span(start, end, alignment_mode="expand")
        if span is not None:
            forgive: set[int] = set()
            for tok in span:
                if tok.pos_ in _IGNORE_POS or tok.lower_ in _IGNORE_WORDS:
                    forgive.update(range(tok.idx, tok.idx + len(tok.text)))
            left = [i for i in left if i not in forgive]
        return all(self.text[i] in _IGNORE_CHARS for i in left)

    def entities_to_mask(self, include_direct: bool = True, include_quasi: bool = True) -> list[GoldEntity]:
        out = []
        for ent in self.entities:
            if not ent.need_masking:
                continue
            if ent.is_direct and not include_direct:
                continue
            if not ent.is_direct and not include_quasi:
                continue
            out.append(ent)
        return out

    def annotators_for_span(self, start: int, end: int) -> set[str]:
        """Annotators having a mask-needed gold mention that fully contains [start, end)."""
        hi = bisect.bisect_right(self._masked_starts, start)
        return {a for s, e, a in self._masked[:hi] if e >= end}


def masked_offsets(spans: Iterable[Sequence[int]]) -> set[int]:
    out: set[int] = set()
    for sp in spans:
        out.update(range(int(sp[0]), int(sp[1])))
    return out


# ---------------------------------------------------------------------------------------------
# Corpus-level scores
# ---------------------------------------------------------------------------------------------
@dataclass
class EntityMiss:
    doc_id: str
    annotator: str
    entity_id: str
    entity_type: str
    is_direct: bool
    unmasked_mentions: list[tuple[int, int]]


class TabEvaluator:
    """Scores system masks ``{doc_id: [[start, end], ...]}`` against TAB gold (FORMAT.md §3)."""

    def __init__(self, documents: Sequence[TabDocument], nlp: Any | None = None):
        if nlp is None:
            from ..pii.spacy_model import load_spacy

            nlp = load_spacy()
        self.nlp = nlp
        self.documents = {d.doc_id: d for d in documents}
        texts = [d.text for d in documents]
        parsed = nlp.pipe(texts, batch_size=8)
        self.gold = {d.doc_id: GoldDocument(d, sd) for d, sd in zip(documents, parsed)}

    def _check(self, system: Mapping[str, Sequence[Sequence[int]]]) -> None:
        for doc_id in system:
            if doc_id not in self.gold:
                raise KeyError(f"system output lists unknown document {doc_id}")

    def recall_counts(self, system, include_direct=True, include_quasi=True, token_level=True):
        masked_by_type: dict[str, int] = {}
        total_by_type: dict[str, int] = {}
        for doc_id, spans in system.items():
            gold = self.gold[doc_id]
            offs = masked_offsets(spans)
            for ent in gold.entities_to_mask(include_direct, include_quasi):
                for s, e in ent.mentions:
                    units = split_by_tokens(gold.text, s, e) if token_level else [(s, e)]
                    for us, ue in units:
                        total_by_type[ent.entity_type] = total_by_type.get(ent.entity_type, 0) + 1
                        if gold.is_mention_masked(offs, us, ue):
                            masked_by_type[ent.entity_type] = masked_by_type.get(ent.entity_type, 0) + 1
        return masked_by_type, total_by_type

    def recall(self, system, include_direct=True, include_quasi=True, token_level=True) -> float:
        masked, total = self.recall_counts(system, include_direct, include_quasi, token_level)
        n = sum(total.values())
        return sum(masked.values()) / n if n else float("nan")

    def recall_by_type(self, system, token_level=True) -> dict[str, float]:
        masked, total = self.recall_counts(system, True, True, token_level)
        return {t: masked.get(t, 0) / n for t, n in sorted(total.items())}

    def entity_misses(self, system, include_direct=True, include_quasi=True) -> tuple[int, list[EntityMiss]]:
        n = 0
        misses: list[EntityMiss] = []
        for doc_id, spans in system.items():
            gold = self.gold[doc_id]
            offs = masked_offsets(spans)
            for ent in gold.entities_to_mask(include_direct, include_quasi):
                n += 1
                unmasked = [
                    (s, e)
                    for (s, e), flag in zip(ent.mentions, ent.mention_needs_mask)
                    if flag and not gold.is_mention_masked(offs, s, e)
                ]
                if unmasked:
                    misses.append(EntityMiss(doc_id, ent.annotator, ent.entity_id, ent.entity_type, ent.is_direct, unmasked))
        return n, misses

    def entity_recall(self, system, include_direct=True, include_quasi=True) -> float:
        n, misses = self.entity_misses(system, include_direct, include_quasi)
        return (n - len(misses)) / n if n else float("nan")

    def precision(self, system, weighting: TokenWeighting | None = None, token_level=True) -> float:
        weighting = weighting or TokenWeighting()
        num = den = 0.0
        for doc_id, spans in system.items():
            gold = self.gold[doc_id]
            units: list[tuple[int, int]] = []
            for sp in spans:
                s, e = int(sp[0]), int(sp[1])
                units.extend(split_by_tokens(gold.text, s, e) if token_level else [(s, e)])
            for (s, e), w in zip(units, weighting.weights(gold.text, units)):
                num += w * len(gold.annotators_for_span(s, e))
                den += w * gold.nb_annotators
        return num / den if den else float("nan")

    def evaluate(self, system, weighting: TokenWeighting | None = None) -> dict[str, Any]:
        """All TAB figures, in the order evaluation.py prints them, plus the per-type entity misses."""
        self._check(system)
        out: dict[str, Any] = {"n_documents": len(system)}
        out["token_recall"] = self.recall(system, token_level=True)
        out["token_recall_by_type"] = self.recall_by_type(system, token_level=True)
        out["mention_recall"] = self.recall(system, token_level=False)
        out["recall_direct_entities"] = self.entity_recall(system, True, False)
        out["recall_quasi_entities"] = self.entity_recall(system, False, True)
        out["recall_all_entities"] = self.entity_recall(system, True, True)
        out["token_precision"] = self.precision(system, token_level=True)
        out["mention_precision"] = self.precision(system, token_level=False)
        p, r = out["token_precision"], out["token_recall"]
        out["token_f1"] = 2 * p * r / (p + r) if p + r else 0.0
        if weighting is not None:
            key = weighting.name
            out[f"weighted_token_precision_{key}"] = self.precision(system, weighting, token_level=True)
            out[f"weighted_mention_precision_{key}"] = self.precision(system, weighting, token_level=False)
        for label, direct, quasi in (("direct", True, False), ("quasi", False, True)):
            n, misses = self.entity_misses(system, direct, quasi)
            by_type: dict[str, list[int]] = {}
            for ent in (e for g in (self.gold[d] for d in system) for e in g.entities_to_mask(direct, quasi)):
                by_type.setdefault(ent.entity_type, [0, 0])[1] += 1
            for m in misses:
                by_type[m.entity_type][0] += 1
            out[f"entity_misses_{label}_by_type"] = {t: {"missed": v[0], "total": v[1]} for t, v in sorted(by_type.items())}
        return out


def format_report(scores: Mapping[str, Any]) -> str:
    """Human-readable summary in evaluation.py's order (rounded to 3 decimals)."""
    r = lambda x: f"{x:.3f}"  # noqa: E731
    lines = [f"Documents: {scores['n_documents']}", f"Token-level recall: {r(scores['token_recall'])}"]
    for t, v in scores["token_recall_by_type"].items():
        lines.append(f"  {t}: {r(v)}")
    lines += [
        f"Mention-level recall: {r(scores['mention_recall'])}",
        f"Entity-level recall, DIRECT (ER_di): {r(scores['recall_direct_entities'])}",
        f"Entity-level recall, QUASI (ER_qi): {r(scores['recall_quasi_entities'])}",
        f"Uniform token-level precision: {r(scores['token_precision'])}",
        f"Uniform mention-level precision: {r(scores['mention_precision'])}",
    ]
    for k, v in scores.items():
        if k.startswith("weighted_"):
            lines.append(f"{k}: {r(v)}")
    for label in ("direct", "quasi"):
        misses = scores.get(f"entity_misses_{label}_by_type", {})
        parts = [f"{t} {v['missed']}/{v['total']}" for t, v in misses.items()]
        lines.append(f"Missed {label.upper()} entities by type: " + ", ".join(parts))
    return "\n".join(lines)
