"""A learned masking decision: paper 001's span-classification indicator (§5.2) with cheap features.

Paper 001 trains, per dataset, a classifier of "would a human annotator mask this span?" on the training split's
decisions (§5.1: logistic regression over LM log-probabilities and the PII type; §5.2: plus the span text through a
fine-tuned transformer), and finds the PII type the most important feature. We have no masked LM offline, so the
features here are the ones the detector already has (``entity_features``): the TAB type and the finer subtype,
which recognizers found the entity, what the rule policy decided (and so the rules' evidence: background country,
legal reference, large city, generic body), the shape of the surface (words, case, digits, share of common English
words) and how often the document mentions it.

* ``LogisticModel`` — weights, bias and decision threshold, saved as JSON with what it was trained on.
* ``fit_logistic`` — L2-regularised logistic regression by Newton's method (IRLS), numpy only.
* ``LearnedPolicy`` — DIRECT where the rules say DIRECT (full names, contact identifiers, case numbers); otherwise
  QUASI when the model's probability reaches the threshold, else NO_MASK.
* ``training_examples`` — (features, label) per detected entity of TAB-format documents: the label is 1 when the
  annotators mask most of the entity's mentions (any annotator's DIRECT/QUASI mention covering a character).

Features are taken from the document's entity registry when the entity is classified; training reads them at
the end of each document, so mention counts are the whole document's (in a stream, the first chunks see fewer).
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from . import wordnet
from .policy import IdentifierPolicy, RulePolicy

TYPES = ("PERSON", "CODE", "LOC", "ORG", "DEM", "DATETIME", "QUANTITY", "MISC")
SUBTYPES = ("NORP", "GPE", "FAC", "LOC", "OCCUPATION", "DATE", "TIME", "CARDINAL", "MONEY", "PERCENT", "QUANTITY",
            "EVENT", "WORK_OF_ART", "LAW", "PRODUCT", "LANGUAGE", "PERSON", "ORG", "CASE")
RECOGNIZERS = ("spacy_ner", "gazetteer", "role", "title", "institution", "acronym", "proper_phrase", "datetime",
               "quantity", "money", "case_number", "alias", "life_dates", "propagation", "initials", "letter_name")
VERDICTS = ("DIRECT", "QUASI", "NO_MASK")
SHAPE = ("words", "lower_case", "has_digit", "common_word_share", "log_mentions", "mention_share", "first_position")
FEATURE_NAMES: tuple[str, ...] = (
    tuple(f"type={t}" for t in TYPES) + tuple(f"subtype={s}" for s in SUBTYPES)
    + ("subtype=other",) + tuple(f"recognizer={r}" for r in RECOGNIZERS) + tuple(f"rules={v}" for v in VERDICTS)
    + SHAPE
)
_INDEX = {name: i for i, name in enumerate(FEATURE_NAMES)}
_WORDS = re.compile(r"[^\W\d_]+")
DEFAULT_MODEL = Path(__file__).with_name("models") / "learned-policy-tab.json"


def entity_features(entity: dict[str, Any], doc: Any, rules_verdict: str) -> np.ndarray:
    """The feature vector of an entity record (``DocumentEntities``) in its document registry ``doc``."""
    x = np.zeros(len(FEATURE_NAMES))
    x[_INDEX[f"type={entity['type']}"]] = 1.0
    sub = entity.get("subtype")
    x[_INDEX.get(f"subtype={sub}", _INDEX["subtype=other"])] = 1.0
    for rec in entity.get("recognizers", ()):
        i = _INDEX.get(f"recognizer={rec}")
        if i is not None:
            x[i] = 1.0
    x[_INDEX[f"rules={rules_verdict}"]] = 1.0
    surface = entity.get("surface") or entity["forms"][0]
    words = _WORDS.findall(surface)
    x[_INDEX["words"]] = min(len(words), 8) / 8
    x[_INDEX["lower_case"]] = float(surface.islower())
    x[_INDEX["has_digit"]] = float(any(c.isdigit() for c in surface))
    x[_INDEX["common_word_share"]] = (sum(wordnet.is_common_word(w) for w in words) / len(words)) if words else 0.0
    seen = max(1, getattr(doc, "mentions_seen", 1))
    x[_INDEX["log_mentions"]] = math.log1p(entity.get("count", 1)) / 4
    x[_INDEX["mention_share"]] = entity.get("count", 1) / seen
    x[_INDEX["first_position"]] = entity.get("first_seen", 0) / seen
    return x


@dataclass
class LogisticModel:
    weights: np.ndarray
    bias: float
    threshold: float = 0.5
    trained_on: str = ""
    feature_names: tuple[str, ...] = FEATURE_NAMES

    def probability(self, x: np.ndarray) -> float:
        return float(1.0 / (1.0 + math.exp(-(float(x @ self.weights) + self.bias))))

    def to_json(self) -> dict[str, Any]:
        return {"feature_names": list(self.feature_names), "weights": [round(float(w), 6) for w in self.weights],
                "bias": round(self.bias, 6), "threshold": self.threshold, "trained_on": self.trained_on}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> "LogisticModel":
        names = tuple(obj["feature_names"])
        if names != FEATURE_NAMES:
            raise ValueError("the model's features differ from this version's (retrain it with `anonstream "
                             "train-policy`)")
        return cls(np.asarray(obj["weights"], dtype=float), float(obj["bias"]), float(obj["threshold"]),
                   obj.get("trained_on", ""), names)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n")

    @classmethod
    def load(cls, path: str | Path | None = None) -> "LogisticModel":
        return cls.from_json(json.loads(Path(path or DEFAULT_MODEL).read_text()))


def fit_logistic(X: np.ndarray, y: np.ndarray, l2: float = 1.0, iterations: int = 50) -> tuple[np.ndarray, float]:
    """Minimise −Σ [y log p + (1−y) log(1−p)] + l2/2 ‖w‖² (bias unpenalised) by Newton steps (IRLS)."""
    n, d = X.shape
    A = np.hstack([X, np.ones((n, 1))])
    theta = np.zeros(d + 1)
    penalty = np.full(d + 1, l2)
    penalty[-1] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(A @ theta)))
        grad = A.T @ (p - y) + penalty * theta
        hess = (A * (p * (1 - p))[:, None]).T @ A + np.diag(penalty) + 1e-9 * np.eye(d + 1)
        step = np.linalg.solve(hess, grad)
        theta -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return theta[:-1], float(theta[-1])


def best_threshold(p: np.ndarray, y: np.ndarray, beta: float = 1.0) -> float:
    """The threshold with the highest F_beta on (p, y): beta > 1 weighs recall over precision (masking)."""
    best, best_f = 0.5, -1.0
    for t in np.unique(np.round(p, 3)):
        pred = p >= t
        tp = float(np.sum(pred & (y == 1)))
        if tp == 0:
            continue
        prec, rec = tp / float(np.sum(pred)), tp / float(np.sum(y == 1))
        f = (1 + beta**2) * prec * rec / (beta**2 * prec + rec)
        if f > best_f:
            best, best_f = float(t), f
    return best


def train(X: np.ndarray, y: np.ndarray, trained_on: str, l2: float = 1.0, beta: float = 1.0) -> LogisticModel:
    w, b = fit_logistic(X, y, l2)
    model = LogisticModel(w, b, 0.5, trained_on)
    p = np.array([model.probability(x) for x in X])
    model.threshold = best_threshold(p, y, beta)
    return model


@dataclass
class LearnedPolicy(IdentifierPolicy):
    """DIRECT where the rules say so, else QUASI when the learned probability reaches the model's threshold."""

    model: LogisticModel = field(default_factory=LogisticModel.load)
    rules: RulePolicy = field(default_factory=RulePolicy)
    name: str = "learned"

    def probability(self, entity, doc) -> tuple[float, str]:
        verdict = self.rules.classify(entity, doc)
        return self.model.probability(entity_features(entity, doc, verdict)), verdict

    def classify(self, entity, doc):
        p, verdict = self.probability(entity, doc)
        if verdict == "DIRECT":
            return "DIRECT"
        return "QUASI" if p >= self.model.threshold else "NO_MASK"

    def trace(self, entity, doc):
        p, verdict = self.probability(entity, doc)
        return {"policy": self.name, "probability": round(p, 4), "threshold": self.model.threshold,
                "rules": verdict, "identifier_type": self.classify(entity, doc)}


def training_examples(documents: Sequence[Any], spans_per_doc: Iterable[Sequence[Any]],
                      registries: Iterable[Any], rules: RulePolicy | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) over every detected entity of TAB-format ``documents`` (``evaluation.tab.TabDocument``), from the
    detector's spans and the documents' entity registries after detection (module docstring for the label)."""
    rules = rules or RulePolicy()
    rows, labels = [], []
    for doc, spans, registry in zip(documents, spans_per_doc, registries):
        gold: set[int] = set()
        for mentions in doc.annotations.values():
            for m in mentions:
                if m.identifier_type in ("DIRECT", "QUASI"):
                    gold.update(range(m.start, m.end))
        covered: dict[str, list[int]] = {}
        for s in spans:
            chars = [i for i in range(s.start, s.end) if doc.text[i].isalnum()]
            hit = covered.setdefault(s.entity_id, [0, 0])
            hit[0] += sum(1 for i in chars if i in gold)
            hit[1] += len(chars)
        for entity_id, (masked, total) in covered.items():
            if total == 0:
                continue
            entity = registry.by_id(entity_id)
            rows.append(entity_features(entity, registry, rules.classify(entity, registry)))
            labels.append(1.0 if masked * 2 >= total else 0.0)
    return np.array(rows), np.array(labels)
