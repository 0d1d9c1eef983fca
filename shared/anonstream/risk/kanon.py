"""k-anonymity, l-diversity and the two-stage identification probability over quasi-identifier tuples.

Records are ``(tuple, doc_id)`` pairs: one per chunk (or mention), ``tuple`` its quasi-identifier
values (e.g. the swapped categories' entities, paper 000 eq. 2.9), ``doc_id`` the document it
belongs to (the metadata an attacker wants). A class is the set of records sharing one tuple.

- k-anonymity: k = the smallest class size (Sweeney 2002); ``class_sizes`` feeds ``pitman.fit_pitman``.
- l-diversity: distinct documents per class, l = the smallest (Machanavajjhala et al. 2007, "distinct"
  l-diversity), and entropy l-diversity exp(min_c H(doc | class c)).
- ``identification_probability``: paper 003 eq. 7-9 (stage 1: exact match on the tuple, 1/|N_z|;
  stage 2: share of 1/L1 distance between standardized feature vectors within N_z).
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "KAnonymity", "LDiversity", "class_sizes", "identification_probability", "k_anonymity", "l_diversity",
]


def _classes(records: Iterable[tuple[Hashable, Hashable]]) -> dict[Hashable, list[Hashable]]:
    classes: dict[Hashable, list[Hashable]] = defaultdict(list)
    for i, record in enumerate(records):
        try:
            key, doc = record
            classes[key].append(doc)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"record {i}: expected a (hashable tuple, doc_id) pair ({exc})") from None
    if not classes:
        raise ValueError("no records")
    return classes


def class_sizes(records: Iterable[tuple[Hashable, Hashable]]) -> list[int]:
    """Size of each class (records per distinct tuple): the n_1..n_K of ``pitman.fit_pitman``."""
    return [len(docs) for docs in _classes(records).values()]


@dataclass(frozen=True)
class KAnonymity:
    """k = min class size; ``distribution`` maps a class size j to f_j, the number of classes of size j."""

    k: int
    n: int
    classes: int
    distribution: dict[int, int]

    def records_below(self, k: int) -> int:
        """Records in classes smaller than k (those a k-anonymous release must change or suppress)."""
        return sum(j * f for j, f in self.distribution.items() if j < k)

    def classes_below(self, k: int) -> int:
        return sum(f for j, f in self.distribution.items() if j < k)

    def as_dict(self) -> dict:
        return {"k": self.k, "n": self.n, "classes": self.classes, "sample_uniques": self.distribution.get(1, 0),
                "distribution": {str(j): f for j, f in sorted(self.distribution.items())}}


def k_anonymity(records: Iterable[tuple[Hashable, Hashable]]) -> KAnonymity:
    """k-anonymity of (tuple, doc_id) records: min class size and the frequencies of class sizes."""
    sizes = class_sizes(records)
    dist = Counter(sizes)
    return KAnonymity(k=min(sizes), n=sum(sizes), classes=len(sizes), distribution=dict(sorted(dist.items())))


@dataclass(frozen=True)
class LDiversity:
    """l = min distinct documents per class; ``entropy_l`` = exp(min_c H(doc | c)) <= l;
    ``distribution`` maps a distinct-document count to the number of classes with it."""

    l: int  # noqa: E741
    entropy_l: float
    classes: int
    distribution: dict[int, int]

    def classes_below(self, l: int) -> int:  # noqa: E741
        """Classes with fewer than l distinct documents (their tuple points to few documents)."""
        return sum(f for d, f in self.distribution.items() if d < l)

    def as_dict(self) -> dict:
        return {"l": self.l, "entropy_l": self.entropy_l, "classes": self.classes,
                "distribution": {str(d): f for d, f in sorted(self.distribution.items())}}


def l_diversity(records: Iterable[tuple[Hashable, Hashable]]) -> LDiversity:
    """Distinct and entropy l-diversity of the documents within each tuple class."""
    distinct, min_entropy = [], math.inf
    for docs in _classes(records).values():
        counts = np.fromiter(Counter(docs).values(), dtype=np.float64)
        distinct.append(counts.size)
        p = counts / counts.sum()
        min_entropy = min(min_entropy, float(-np.sum(p * np.log(p))))
    dist = Counter(distinct)
    return LDiversity(l=min(distinct), entropy_l=math.exp(min_entropy), classes=len(distinct),
                      distribution=dict(sorted(dist.items())))


def _standardize(X: np.ndarray, how: str | None, reference: np.ndarray) -> np.ndarray:
    if how is None:
        return X
    if how == "document":                          # per row, across its features (paper 003 eq. 8)
        mu, sd = X.mean(axis=1, keepdims=True), X.std(axis=1, keepdims=True)
    elif how == "feature":                         # per column, with the release's statistics
        mu, sd = reference.mean(axis=0, keepdims=True), reference.std(axis=0, keepdims=True)
    else:
        raise ValueError(f"standardize must be 'document', 'feature' or None, got {how!r}")
    return (X - mu) / np.where(sd > 0, sd, 1.0)    # a constant row / column is only centred


def identification_probability(release_tuples: Sequence[Hashable], target_tuple: Hashable, true_index: int,
                               release_features=None, target_features=None, standardize: str | None = "document",
                               eps: float = 1e-12) -> float:
    """Probability that the attacker picks the true record (paper 003 eq. 7-9).

    Stage 1 (eq. 7): N_z = records whose tuple equals the target's; without features the answer
    is 1/|N_z| if the true record is in N_z. Stage 2 (eq. 8-9): s_i = 1/max(eps, ||x_i' - x_z'||_1)
    on standardized features x', and the answer is s_true / sum_{i in N_z} s_i. 0 when the true
    record's tuple no longer matches (e.g. it was swapped). Average over replicates outside.
    """
    n = len(release_tuples)
    if not (0 <= true_index < n):
        raise ValueError(f"true_index must be in [0, {n}), got {true_index}")
    if eps <= 0:
        raise ValueError("eps must be > 0")
    members = [i for i, t in enumerate(release_tuples) if t == target_tuple]
    if true_index not in members:
        return 0.0
    if release_features is None and target_features is None:
        return 1.0 / len(members)
    if release_features is None or target_features is None:
        raise ValueError("stage 2 needs both release_features and target_features")
    X = np.asarray(release_features, dtype=np.float64)
    z = np.asarray(target_features, dtype=np.float64).reshape(1, -1)
    if X.ndim != 2 or X.shape[0] != n or X.shape[1] != z.shape[1]:
        raise ValueError(f"release_features must be {n} x {z.shape[1]}, got {X.shape}")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(z))):
        raise ValueError("features must be finite")
    Xs, zs = _standardize(X[members], standardize, X), _standardize(z, standardize, X)
    d = np.abs(Xs - zs).sum(axis=1)
    s = 1.0 / np.maximum(d, eps)
    return float(s[members.index(true_index)] / s.sum())
