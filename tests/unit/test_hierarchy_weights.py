"""Record-weighted clustering in the hierarchy builder: weighted Ward's linkage, nesting, what the weights change."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.cluster.hierarchy import linkage

from anonstream.hierarchy.builder import build_hierarchy, kmeans_levels, ward_levels, weighted_ward_linkage

from test_hierarchy_builder import COUNTS, VALUES, fake_embed

# two frequent values 1 apart and a rare one 1.5 beyond the second: unweighted, the frequent pair is the closest;
# weighted, merging it costs 1000 · 1² / 2 = 500 while the rare value joins its neighbour for ≈ 1.5² = 2.25
LINE = np.array([[0.0], [1.0], [2.5]])
LINE_RECORDS = np.array([1000.0, 1000.0, 1.0])


def _brute_force_weighted_ward(X: np.ndarray, w: np.ndarray) -> list[float]:
    """The merge heights of the greedy definition: always merge the pair of least weighted cost."""
    clusters = [([i], X[i].astype(float), float(w[i])) for i in range(len(X))]
    heights = []
    while len(clusters) > 1:
        cost, i, j = min((ma * mb / (ma + mb) * float(((ca - cb) ** 2).sum()), i, j)
                         for i, (_, ca, ma) in enumerate(clusters) for j, (_, cb, mb) in enumerate(clusters) if i < j)
        (ma_, ca, ma), (mb_, cb, mb) = clusters[i], clusters[j]
        clusters = [c for n, c in enumerate(clusters) if n not in (i, j)]
        clusters.append((ma_ + mb_, (ma * ca + mb * cb) / (ma + mb), ma + mb))
        heights.append(np.sqrt(2 * cost))
    return heights


def test_weighted_ward_equals_scipy_ward_for_unit_weights_and_the_greedy_definition_otherwise():
    rng = np.random.default_rng(7)
    for n in (2, 5, 17, 40):
        X = rng.normal(size=(n, 6))
        unit = weighted_ward_linkage(X, np.ones(n))
        reference = linkage(X, method="ward")
        assert np.allclose(unit[:, 2], reference[:, 2]) and np.array_equal(unit[:, 3], reference[:, 3])
        w = rng.integers(1, 500, size=n).astype(float)
        assert np.allclose(weighted_ward_linkage(X, w)[:, 2], _brute_force_weighted_ward(X, w))
    with pytest.raises(ValueError):
        weighted_ward_linkage(X, np.zeros(len(X)))


def test_record_weights_keep_frequent_values_apart_in_a_hand_made_case():
    assert ward_levels(LINE, [2])[:, 0].tolist() == [0, 0, 1]  # paper: the frequent pair merges first
    assert ward_levels(LINE, [2], LINE_RECORDS)[:, 0].tolist() == [0, 1, 1]  # the rare value joins its neighbour
    assert kmeans_levels(LINE, [2], seed=0)[:, 0].tolist() in ([0, 0, 1], [1, 1, 0])
    assert kmeans_levels(LINE, [2], seed=0, weights=LINE_RECORDS)[:, 0].tolist() in ([0, 1, 1], [1, 0, 0])


@pytest.mark.parametrize("method,cut", [("ward", "count"), ("kmeans", "count"), ("ward", "mass")])
def test_record_weighted_levels_nest(method, cut):
    h = build_hierarchy("fruit", COUNTS, fake_embed, method=method, cut=cut, weights="records", ratio=1.5,
                        reference=["mango"])  # a reference value never observed weighs 1
    assert h.info["weights"] == "records" and {p[-1] for p in h.paths.values()} == {"*"}
    members = [{} for _ in range(h.levels)]
    for leaf, p in h.paths.items():
        for level in range(h.levels):
            members[level].setdefault(p[level], set()).add(leaf)
    for level in range(1, h.levels):  # every node of level i + 1 is a union of nodes of level i
        for node in members[level].values():
            assert all(child <= node or not child & node for child in members[level - 1].values())
        assert len(members[level]) < len(members[level - 1])


def test_record_weighted_ward_does_not_depend_on_the_value_order():
    X = fake_embed(VALUES)
    w = np.asarray([COUNTS[v] for v in VALUES], dtype=float) + np.arange(len(VALUES)) * 1e-3  # no ties
    order = np.random.default_rng(3).permutation(len(VALUES))
    counts = [12, 8, 5, 3, 2]
    first, second = ward_levels(X, counts, w), ward_levels(X[order], counts, w[order])
    for level in range(len(counts)):
        pairs = set(zip(first[order, level], second[:, level]))
        assert len(pairs) == counts[level]  # the same partition, only the cluster ids differ


def test_weights_must_be_known():
    with pytest.raises(ValueError):
        build_hierarchy("fruit", COUNTS, fake_embed, weights="people")
