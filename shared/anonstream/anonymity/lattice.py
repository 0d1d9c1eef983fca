"""Full-domain generalization lattice and its globally optimal search with record suppression (paper 004,
§4: ARX's FLASH with k-anonymity, distinct l-diversity and a suppression limit).

A lattice node picks one hierarchy level per quasi-identifier; every record's tuple is generalized to
those levels, classes smaller than k (or with fewer than l distinct sensitive values) are suppressed, and the
node is *feasible* when at most ``suppression_limit`` of the records are suppressed. Feasibility is
monotone: generalizing further never splits a class, so every node above a feasible node is feasible and
every node below an infeasible one is infeasible. The search walks the lattice top-down and skips, without
grouping, every node below a known infeasible one; among the feasible nodes it returns the one of least
information loss, ARX's default "Loss" metric (Iyengar): per quasi-identifier the mean share of the leaf
domain a released value covers (a suppressed value covers all of it), rescaled to [0, 1] (0: all leaves,
1: all ``*``); the quasi-identifiers' losses L_a are combined as ARX's geometric mean, (Π (1 + L_a))^(1/m) − 1.
Ties go to the lower node. The search groups one weighted row per distinct (leaf tuple, sensitive value)
(``compress``; 3,072 rows for Adult's 32,561) instead of every record. With ARX's Adult hierarchies this picks the nodes behind every manual figure of
paper 004 for k = 2 … 100 (benchmarks/results/hierarchy.md).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from .metrics import ReleaseMetrics, release_metrics


@dataclass(frozen=True)
class QuasiIdentifier:
    """One column under a hierarchy: per level, each record's generalized-value code and domain share."""

    name: str
    codes: np.ndarray  # levels x n, int64
    shares: np.ndarray  # levels x n, float64: leaves under the record's generalized value / all leaves
    labels: tuple[tuple[str, ...], ...]  # per level: code -> generalized value

    @property
    def levels(self) -> int:
        return self.codes.shape[0]

    @classmethod
    def from_paths(cls, name: str, values: Sequence[str], paths: Mapping[str, Sequence[str]]) -> "QuasiIdentifier":
        """``paths``: leaf value -> its generalizations, level 0 (the value) to the root; every value of the
        column must be a leaf (KeyError otherwise)."""
        leaves = list(paths)
        depth = len(paths[leaves[0]])
        if any(len(p) != depth for p in paths.values()):
            raise ValueError(f"{name}: every leaf needs {depth} levels")
        leaf_index = {v: i for i, v in enumerate(leaves)}
        records = np.fromiter((leaf_index[v] for v in values), dtype=np.int64, count=len(values))
        codes, shares, labels = [], [], []
        for level in range(depth):
            names, leaf_code = np.unique([paths[v][level] for v in leaves], return_inverse=True)
            leaf_share = np.bincount(leaf_code)[leaf_code] / len(leaves)
            codes.append(leaf_code[records])
            shares.append(leaf_share[records])
            labels.append(tuple(str(x) for x in names))
        return cls(name, np.asarray(codes, dtype=np.int64), np.asarray(shares), tuple(labels))


@dataclass(frozen=True)
class NodeEvaluation:
    node: tuple[int, ...]
    feasible: bool
    loss: float
    class_sizes: np.ndarray  # of the kept classes
    class_distinct: np.ndarray | None
    suppressed: int
    suppressed_distinct: int

    def metrics(self, convention: str = "explicit") -> ReleaseMetrics:
        return release_metrics(self.class_sizes, self.class_distinct, self.suppressed, self.suppressed_distinct,
                               convention)


@dataclass(frozen=True)
class SearchResult:
    best: NodeEvaluation | None  # None: no node is feasible
    lattice_size: int
    evaluated: int  # nodes grouped; the others were pruned by monotonicity


def _class_ids(qis: Sequence[QuasiIdentifier], node: Sequence[int]) -> np.ndarray:
    key, span = np.zeros(qis[0].codes.shape[1], dtype=np.int64), 1
    for qi, level in zip(qis, node):
        codes = qi.codes[level]
        width = int(codes.max()) + 1
        if span * width >= 2 ** 62:  # compact before the mixed-radix key overflows
            key = np.unique(key, return_inverse=True)[1]
            span = int(key.max()) + 1
        key, span = key * width + codes, span * width
    return np.unique(key, return_inverse=True)[1]


def compress(qis: Sequence[QuasiIdentifier], sensitive: np.ndarray | None
             ) -> tuple[list[QuasiIdentifier], np.ndarray | None, np.ndarray]:
    """One weighted row per distinct (leaf tuple, sensitive value): the same classes, far fewer rows."""
    columns = [qi.codes[0] for qi in qis] + ([] if sensitive is None else [np.asarray(sensitive)])
    _, first, weights = np.unique(np.stack(columns, axis=1), axis=0, return_index=True, return_counts=True)
    small = [QuasiIdentifier(qi.name, qi.codes[:, first], qi.shares[:, first], qi.labels) for qi in qis]
    return small, None if sensitive is None else np.asarray(sensitive)[first], weights


def evaluate(qis: Sequence[QuasiIdentifier], node: Sequence[int], k: int, l: int = 1,
             sensitive: np.ndarray | None = None, suppression_limit: float = 0.0,
             weights: np.ndarray | None = None) -> NodeEvaluation:
    """Group the records at ``node``, suppress the classes below k (or below l distinct ``sensitive`` codes).
    ``weights``: records per row (``compress``), default one."""
    w = np.ones(qis[0].codes.shape[1], dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)
    n = int(w.sum())
    ids = _class_ids(qis, node)
    sizes = np.bincount(ids, weights=w).astype(np.int64)
    keep_class = sizes >= k
    distinct = None
    if sensitive is not None:
        pairs = np.unique(ids * (int(sensitive.max()) + 1) + sensitive)
        distinct = np.bincount(pairs // (int(sensitive.max()) + 1), minlength=len(sizes))
        keep_class &= distinct >= l
    keep = keep_class[ids]
    suppressed = int(n - w[keep].sum())
    losses = []
    for qi, level in zip(qis, node):
        floor = 1.0 / len(qi.labels[0])  # a leaf's share
        share = float(np.where(keep, qi.shares[level], 1.0) @ w) / n
        losses.append((share - floor) / (1.0 - floor) if floor < 1.0 else 0.0)
    suppressed_distinct = 0 if sensitive is None else len(np.unique(sensitive[~keep]))
    return NodeEvaluation(tuple(int(x) for x in node), suppressed <= suppression_limit * n,
                          float(np.prod(np.add(losses, 1.0)) ** (1.0 / len(losses)) - 1.0), sizes[keep_class], None if distinct is None else distinct[keep_class],
                          suppressed, suppressed_distinct)


def _order(e: NodeEvaluation) -> tuple:
    return (round(e.loss, 12), sum(e.node), e.node)


def search(qis: Sequence[QuasiIdentifier], k: int, l: int = 1, sensitive: np.ndarray | None = None,
           suppression_limit: float = 0.0) -> SearchResult:
    """The feasible node of least loss (see the module docstring), pruning below infeasible nodes."""
    qis, sensitive, weights = compress(qis, sensitive)
    nodes = sorted(itertools.product(*(range(qi.levels) for qi in qis)), key=lambda v: (-sum(v), v))
    infeasible = np.empty((0, len(qis)), dtype=np.int64)
    best, evaluated = None, 0
    for node in nodes:
        if len(infeasible) and bool((np.asarray(node) <= infeasible).all(axis=1).any()):
            continue
        evaluated += 1
        result = evaluate(qis, node, k, l, sensitive, suppression_limit, weights)
        if not result.feasible:
            infeasible = np.vstack([infeasible, np.asarray(node)])
        elif best is None or _order(result) < _order(best):
            best = result
    return SearchResult(best, len(nodes), evaluated)


def brute_force(qis: Sequence[QuasiIdentifier], k: int, l: int = 1, sensitive: np.ndarray | None = None,
                suppression_limit: float = 0.0) -> NodeEvaluation | None:
    """Every node evaluated, no pruning: the oracle the search is tested against."""
    feasible = [e for node in itertools.product(*(range(qi.levels) for qi in qis))
                if (e := evaluate(qis, node, k, l, sensitive, suppression_limit)).feasible]
    return min(feasible, key=_order) if feasible else None
