"""ClustEm4Ano hierarchy construction (paper 004, §3.2 Algorithm 1), cut into a few levels.

The distinct values (observed values plus an optional reference vocabulary) are embedded and clustered
bottom-up, either

* ``ward``: one Ward dendrogram (``scipy.cluster.hierarchy.linkage``), cut at decreasing cluster counts;
  cuts of one dendrogram nest, and equal the paper's repeated ``AgglomerativeClustering(n - i)``;
* ``kmeans``: the paper's iterated KMeans, each level clustering the previous level's centroids, here
  weighted by the number of values each centroid stands for (the paper's are unweighted) and seeded.

The paper keeps one merge per level (as many levels as values); here the levels are cut either by
cluster count (``cut="count"``: the count divided by ``ratio`` per level, n/2, n/4, ...), which keeps the
full-domain lattice small, or by record mass (``cut="mass"``, Ward only; beyond the paper): at level j the
dendrogram is split top-down only where both halves hold at least ``ratio``^j records, so rare values merge
with their nearest neighbours first while frequent values stay apart (thresholds grow, so the levels nest).

Node labels: the paper's labels list the members (``{Masters, Bachelors, Doctorate}``), rare ones included.
Here a node is named after its most frequent member, and only if that member has at least
``min_label_count`` records ("Bachelors or similar"); otherwise it gets a category-level name
("workclass group 2.1"). A single-member node keeps its value; the root is ``*``.
"""
from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

import numpy as np

from .model import ROOT, Hierarchy

PLACEHOLDERS = frozenset({"?", "", "-", "n/a", "na", "none", "null", "unknown"})


def embedding_text(value: str) -> str:
    """The text embedded for a value: ``-``/``_`` as spaces (Self-emp-not-inc → "Self emp not inc"); a
    missing-value token becomes "unknown" instead of the paper's "none" vector shared with OOV words."""
    if value.strip().casefold() in PLACEHOLDERS:
        return "unknown"
    return " ".join(value.replace("-", " ").replace("_", " ").split())


def level_counts(n: int, ratio: float = 2.0) -> list[int]:
    """Cluster counts of the levels between the leaves and the root: n/ratio, n/ratio², ... while > 1."""
    if ratio <= 1.0:
        raise ValueError("ratio must be > 1")
    counts, m = [], n
    while (m := math.floor(m / ratio)) > 1:
        if not counts or m < counts[-1]:
            counts.append(m)
    return counts


def ward_levels(X: np.ndarray, counts: Sequence[int]) -> np.ndarray:
    """values x levels cluster ids: the Ward dendrogram cut at each count (nested)."""
    from scipy.cluster.hierarchy import cut_tree, linkage

    if not counts:
        return np.zeros((len(X), 0), dtype=np.int64)
    Z = linkage(np.asarray(X, dtype=np.float64), method="ward")
    return cut_tree(Z, n_clusters=list(counts)).astype(np.int64)


def mass_levels(X: np.ndarray, weights: np.ndarray, ratio: float = 2.0) -> np.ndarray:
    """values x levels cluster ids: the Ward dendrogram split where both halves hold >= ratio^j records
    (j = 1, 2, ...); levels equal to the leaves, the root or the level below are left out."""
    from scipy.cluster.hierarchy import linkage, to_tree

    if len(X) < 3:
        return np.zeros((len(X), 0), dtype=np.int64)
    Z = linkage(np.asarray(X, dtype=np.float64), method="ward")
    root = to_tree(Z)
    mass = list(np.asarray(weights, dtype=np.float64))
    for left, right in Z[:, :2].astype(np.int64):  # merge i makes node n + i
        mass.append(mass[left] + mass[right])
    out: list[np.ndarray] = []
    threshold = ratio
    while threshold <= mass[root.id]:
        labels, stack, next_id = np.zeros(len(X), dtype=np.int64), [root], 0
        while stack:
            node = stack.pop()
            if not node.is_leaf() and min(mass[node.left.id], mass[node.right.id]) >= threshold:
                stack += [node.right, node.left]
            else:
                labels[node.pre_order()] = next_id
                next_id += 1
        if 1 < next_id < len(X) and (not out or next_id < len(np.unique(out[-1]))):
            out.append(labels)
        threshold *= ratio
    return np.stack(out, axis=1) if out else np.zeros((len(X), 0), dtype=np.int64)


def kmeans_levels(X: np.ndarray, counts: Sequence[int], seed: int = 0) -> np.ndarray:
    """values x levels cluster ids: KMeans on the previous level's centroids (weighted by their values)."""
    from sklearn.cluster import KMeans

    labels = np.arange(len(X))
    points, weights = np.asarray(X, dtype=np.float64), np.ones(len(X))
    out = []
    for m in counts:
        km = KMeans(n_clusters=m, n_init=10, random_state=seed).fit(points, sample_weight=weights)
        labels = km.labels_[labels]
        points = km.cluster_centers_
        weights = np.bincount(km.labels_, weights=weights, minlength=m)
        out.append(labels.copy())
    return np.stack(out, axis=1) if out else np.zeros((len(X), 0), dtype=np.int64)


def node_label(attribute: str, members: Sequence[str], counts: Mapping[str, int], level: int, index: int,
               min_label_count: int) -> str:
    """A readable name that never names a rare member (see the module docstring)."""
    if len(members) == 1:
        return members[0]
    top = max(members, key=lambda v: (counts.get(v, 0), v))
    if counts.get(top, 0) >= min_label_count and top.strip().casefold() not in PLACEHOLDERS:
        return f"{top} or similar"
    return f"{attribute} group {level}.{index}"


def build_hierarchy(attribute: str, counts: Mapping[str, int], embed: Callable[[list[str]], np.ndarray],
                    method: str = "ward", ratio: float = 2.0, reference: Sequence[str] = (), cut: str = "count",
                    min_label_count: int = 10, embedding_model: str = "", seed: int = 0) -> Hierarchy:
    """A hierarchy over the observed values (``counts``: value -> records) and the ``reference`` values."""
    values = list(dict.fromkeys([*counts, *reference]))
    if not values:
        raise ValueError(f"{attribute}: no values")
    X = np.asarray(embed([embedding_text(v) for v in values]), dtype=np.float32)
    if cut == "mass":
        if method != "ward":
            raise ValueError("cut='mass' needs method='ward' (a dendrogram)")
        ids = mass_levels(X, np.asarray([counts.get(v, 0) for v in values], dtype=np.float64), ratio)
    elif cut != "count":
        raise ValueError("cut must be 'count' or 'mass'")
    elif method == "ward":
        ids = ward_levels(X, level_counts(len(values), ratio))
    elif method == "kmeans":
        ids = kmeans_levels(X, level_counts(len(values), ratio), seed)
    else:
        raise ValueError("method must be 'ward' or 'kmeans'")
    columns = [values]
    for level in range(ids.shape[1]):
        members: dict[int, list[str]] = {}
        for v, c in zip(values, ids[:, level]):
            members.setdefault(int(c), []).append(v)
        names = {c: node_label(attribute, m, counts, level + 1, i, min_label_count)
                 for i, (c, m) in enumerate(sorted(members.items(), key=lambda cm: cm[1][0]))}
        columns.append([names[int(c)] for c in ids[:, level]])
    columns.append([ROOT] * len(values))
    paths = {v: tuple(col[i] for col in columns) for i, v in enumerate(values)}
    centroids = {}
    if len(columns) > 2:
        for label in dict.fromkeys(columns[1]):
            mean = X[[i for i, x in enumerate(columns[1]) if x == label]].mean(axis=0)
            centroids[label] = (mean / (np.linalg.norm(mean) or 1.0)).astype(np.float32)
    info = {"method": method, "cut": cut, "ratio": ratio,
            "cluster_counts": [len(values), *(len(np.unique(ids[:, j])) for j in range(ids.shape[1])), 1],
            "embedding_model": embedding_model, "values": len(values), "min_label_count": min_label_count}
    return Hierarchy(attribute, paths, centroids, info)
