"""ClustEm4Ano hierarchy construction (paper 004, §3.2 Algorithm 1), cut into a few levels.

The distinct values (observed values plus an optional reference vocabulary) are embedded and clustered
bottom-up, either

* ``ward``: one Ward dendrogram (``scipy.cluster.hierarchy.linkage``), cut at decreasing cluster counts;
  cuts of one dendrogram nest, and equal the paper's repeated ``AgglomerativeClustering(n - i)``;
* ``kmeans``: the paper's iterated KMeans, each level clustering the previous level's centroids, here
  weighted by the number of values each centroid stands for (the paper's are unweighted) and seeded.

Either clustering can weight each value by its record count (``weights="records"``; beyond the paper, whose
values count once, ``weights="values"``): Ward then merges the pair of least weighted increase in the
within-cluster sum of squares, w_A w_B / (w_A + w_B) · ||c_A − c_B||², and KMeans fits with the record counts
as ``sample_weight``. Rare values join their nearest neighbour early and frequent values stay apart until the
top levels, which is what a full-domain search needs: a level that generalizes the rare values costs the
frequent ones nothing (benchmarks/results/hierarchy.md).

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

WEIGHTINGS = ("values", "records")
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


def weighted_ward_linkage(X: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Ward's linkage of points with masses ``weights`` (> 0), as a scipy linkage matrix: the merge of A and B
    costs w_A w_B / (w_A + w_B) · ||c_A − c_B||², its height is sqrt(2 · cost) (scipy's ward for unit masses).
    Nearest-neighbour chain (the cost is reducible): O(n²) distance rows, O(n · d) memory."""
    centroids = np.array(X, dtype=np.float64)
    mass = np.array(weights, dtype=np.float64)
    n = len(centroids)
    if n < 2 or (mass <= 0).any():
        raise ValueError("need >= 2 points with positive weights")
    norms = (centroids ** 2).sum(axis=1)
    active = np.ones(n, dtype=bool)
    merges: list[tuple[int, int, float]] = []  # (slot, slot, height); a cluster lives in one member's slot
    chain: list[int] = []
    while len(merges) < n - 1:
        if not chain:
            chain.append(int(np.flatnonzero(active)[0]))
        a = chain[-1]
        distance = np.maximum(norms + norms[a] - 2.0 * (centroids @ centroids[a]), 0.0)
        cost = mass[a] * mass / (mass[a] + mass) * distance
        cost[~active] = np.inf
        cost[a] = np.inf
        b = int(np.argmin(cost))
        if len(chain) > 1 and cost[chain[-2]] <= cost[b]:  # reciprocal nearest neighbours: merge
            b = chain[-2]
            del chain[-2:]
            merges.append((a, b, float(np.sqrt(2.0 * cost[b]))))
            total = mass[a] + mass[b]
            centroids[b] = (mass[a] * centroids[a] + mass[b] * centroids[b]) / total
            mass[b], active[a] = total, False
            norms[b] = centroids[b] @ centroids[b]
        else:
            chain.append(b)
    order = sorted(range(n - 1), key=lambda i: merges[i][2])  # stable: ties keep the chain's order
    parent, size = list(range(2 * n - 1)), [1] * n + [0] * (n - 1)

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    Z = np.zeros((n - 1, 4))
    for row, i in enumerate(order):
        left, right = sorted((root(merges[i][0]), root(merges[i][1])))
        size[n + row] = size[left] + size[right]
        parent[left] = parent[right] = n + row
        Z[row] = (left, right, merges[i][2], size[n + row])
    return Z


def _linkage(X: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    from scipy.cluster.hierarchy import linkage

    if weights is None:
        return linkage(np.asarray(X, dtype=np.float64), method="ward")
    return weighted_ward_linkage(X, weights)


def ward_levels(X: np.ndarray, counts: Sequence[int], weights: np.ndarray | None = None) -> np.ndarray:
    """values x levels cluster ids: the (record-weighted, when ``weights``) Ward dendrogram cut at each count."""
    from scipy.cluster.hierarchy import cut_tree

    if not counts:
        return np.zeros((len(X), 0), dtype=np.int64)
    return cut_tree(_linkage(X, weights), n_clusters=list(counts)).astype(np.int64)


def mass_levels(X: np.ndarray, weights: np.ndarray, ratio: float = 2.0, weighted: bool = False) -> np.ndarray:
    """values x levels cluster ids: the Ward dendrogram (record-weighted if ``weighted``) split where both
    halves hold >= ratio^j records (j = 1, 2, ...); levels equal to the leaves, the root or the level below are
    left out."""
    from scipy.cluster.hierarchy import to_tree

    if len(X) < 3:
        return np.zeros((len(X), 0), dtype=np.int64)
    Z = _linkage(X, np.maximum(weights, 1.0) if weighted else None)
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


def kmeans_levels(X: np.ndarray, counts: Sequence[int], seed: int = 0, weights: np.ndarray | None = None
                  ) -> np.ndarray:
    """values x levels cluster ids: KMeans on the previous level's centroids, weighted by the values (or, with
    ``weights``, the records) each centroid stands for."""
    from sklearn.cluster import KMeans

    labels = np.arange(len(X))
    points = np.asarray(X, dtype=np.float64)
    weights = np.ones(len(X)) if weights is None else np.asarray(weights, dtype=np.float64)
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
                    min_label_count: int = 10, embedding_model: str = "", seed: int = 0,
                    weights: str = "values") -> Hierarchy:
    """A hierarchy over the observed values (``counts``: value -> records) and the ``reference`` values.
    ``weights="records"``: each value weighs its record count in the clustering (a reference value never
    observed weighs 1, as if seen once)."""
    values = list(dict.fromkeys([*counts, *reference]))
    if not values:
        raise ValueError(f"{attribute}: no values")
    if weights not in WEIGHTINGS:
        raise ValueError(f"weights must be one of {WEIGHTINGS}")
    X = np.asarray(embed([embedding_text(v) for v in values]), dtype=np.float32)
    records = np.asarray([counts.get(v, 0) for v in values], dtype=np.float64)
    mass = np.maximum(records, 1.0) if weights == "records" else None
    if cut == "mass":
        if method != "ward":
            raise ValueError("cut='mass' needs method='ward' (a dendrogram)")
        ids = mass_levels(X, records, ratio, weighted=mass is not None)
    elif cut != "count":
        raise ValueError("cut must be 'count' or 'mass'")
    elif method == "ward":
        ids = ward_levels(X, level_counts(len(values), ratio), mass)
    elif method == "kmeans":
        ids = kmeans_levels(X, level_counts(len(values), ratio), seed, mass)
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
    info = {"method": method, "cut": cut, "ratio": ratio, "weights": weights,
            "cluster_counts": [len(values), *(len(np.unique(ids[:, j])) for j in range(ids.shape[1])), 1],
            "embedding_model": embedding_model, "values": len(values), "min_label_count": min_label_count}
    return Hierarchy(attribute, paths, centroids, info)
