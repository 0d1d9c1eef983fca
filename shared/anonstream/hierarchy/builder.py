"""ClustEm4Ano hierarchy construction (paper 004, §3.2 Algorithm 1), cut into a few levels.

The distinct values (observed values plus an optional reference vocabulary) are embedded and clustered
bottom-up, either

* ``ward``: one Ward dendrogram (``scipy.cluster.hierarchy.linkage``), cut at decreasing cluster counts;
  cuts of one dendrogram nest, and equal the paper's repeated ``AgglomerativeClustering(n - i)``;
* ``kmeans``: the paper's iterated KMeans, each level clustering the previous level's centroids, here
  weighted by the number of values each centroid stands for (the paper's are unweighted) and seeded.

The paper keeps one merge per level (as many levels as values); here the cluster count is divided by
``ratio`` per level (n/2, n/4, ... by default), which keeps the full-domain lattice small.

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
                    method: str = "ward", ratio: float = 2.0, reference: Sequence[str] = (),
                    min_label_count: int = 10, embedding_model: str = "", seed: int = 0) -> Hierarchy:
    """A hierarchy over the observed values (``counts``: value -> records) and the ``reference`` values."""
    values = list(dict.fromkeys([*counts, *reference]))
    if not values:
        raise ValueError(f"{attribute}: no values")
    X = np.asarray(embed([embedding_text(v) for v in values]), dtype=np.float32)
    cut = level_counts(len(values), ratio)
    if method == "ward":
        ids = ward_levels(X, cut)
    elif method == "kmeans":
        ids = kmeans_levels(X, cut, seed)
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
    info = {"method": method, "ratio": ratio, "cluster_counts": [len(values), *cut, 1],
            "embedding_model": embedding_model, "values": len(values), "min_label_count": min_label_count}
    return Hierarchy(attribute, paths, centroids, info)
