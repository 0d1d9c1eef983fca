"""k-anonymity, l-diversity and the two-stage identification probability (paper 003 eq. 7-9)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from anonstream.risk import fit_pitman
from anonstream.risk.kanon import class_sizes, identification_probability, k_anonymity, l_diversity

RECORDS = [
    (("Acme", "Paris"), "d1"), (("Acme", "Paris"), "d1"), (("Acme", "Paris"), "d2"),
    (("Acme", "Oslo"), "d1"),
    (("Bolt", "Rome"), "d3"), (("Bolt", "Rome"), "d4"), (("Bolt", "Rome"), "d5"), (("Bolt", "Rome"), "d3"),
    ((None, "Rome"), "d2"),
]


def test_k_anonymity_counts():
    k = k_anonymity(RECORDS)
    assert (k.k, k.n, k.classes) == (1, 9, 4)
    assert k.distribution == {1: 2, 3: 1, 4: 1}
    assert k.records_below(2) == 2 and k.records_below(4) == 5 and k.classes_below(5) == 4
    assert k.as_dict()["sample_uniques"] == 2
    assert sorted(class_sizes(RECORDS)) == [1, 1, 3, 4]


def test_l_diversity_counts():
    d = l_diversity(RECORDS)
    assert (d.l, d.classes) == (1, 4)
    assert d.distribution == {1: 2, 2: 1, 3: 1}
    assert d.classes_below(2) == 2
    assert d.entropy_l == pytest.approx(1.0)                       # singleton classes have H = 0
    two = l_diversity([(("a",), "x"), (("a",), "y"), (("b",), "x"), (("b",), "x"), (("b",), "y"), (("b",), "z")])
    assert two.l == 2
    h_a, h_b = math.log(2), -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25))
    assert two.entropy_l == pytest.approx(math.exp(min(h_a, h_b)))
    assert two.entropy_l <= two.l


def test_sizes_feed_the_pitman_fit():
    records = [((i % 7, i % 11), f"d{i % 13}") for i in range(300)] + [((100 + i, 0), "u") for i in range(20)]
    fit = fit_pitman(class_sizes(records))
    assert fit.n == 320 and fit.s1 == 20


@pytest.mark.parametrize("bad", [[], [("a",)], [(["unhashable"], "d")], [1, 2]])
def test_bad_records_are_errors(bad):
    with pytest.raises(ValueError):
        k_anonymity(bad)
    with pytest.raises(ValueError):
        l_diversity(bad)


def test_stage_one_is_one_over_the_match_set():
    tuples = [t for t, _ in RECORDS]
    assert identification_probability(tuples, ("Bolt", "Rome"), 5) == pytest.approx(1 / 4)
    assert identification_probability(tuples, ("Acme", "Oslo"), 3) == 1.0
    assert identification_probability(tuples, ("Acme", "Oslo"), 0) == 0.0       # the true record no longer matches
    assert identification_probability(tuples, ("Nowhere",), 0) == 0.0           # |N_z| = 0: the attacker fails


def test_stage_two_shares_inverse_l1_distances():
    tuples = ["a", "a", "a", "b"]
    X = np.array([[1.0, 2.0, 4.0], [3.0, 1.0, 0.0], [0.0, 0.0, 9.0], [1.0, 2.0, 4.0]])
    z = np.array([1.0, 2.0, 5.0])
    # no standardization: d = (1, 2+1+5, 1+2+4) = (1, 8, 7)
    s = np.array([1 / 1, 1 / 8, 1 / 7])
    assert identification_probability(tuples, "a", 0, X, z, standardize=None) == pytest.approx(s[0] / s.sum())
    assert identification_probability(tuples, "a", 1, X, z, standardize=None) == pytest.approx(s[1] / s.sum())
    # per-document z-scores (eq. 8): by hand
    zs = lambda v: (v - v.mean()) / v.std()  # noqa: E731
    d = np.array([np.abs(zs(X[i]) - zs(z)).sum() for i in range(3)])
    expected = (1 / d[2]) / (1 / d).sum()
    assert identification_probability(tuples, "a", 2, X, z) == pytest.approx(expected)
    # probabilities over N_z sum to 1
    total = sum(identification_probability(tuples, "a", i, X, z, standardize="feature") for i in range(3))
    assert total == pytest.approx(1.0)


def test_stage_two_guards():
    tuples = ["a", "a"]
    X = np.array([[1.0, 1.0, 1.0], [0.0, 2.0, 5.0]])              # first row constant: sigma = 0
    z = np.array([1.0, 1.0, 1.0])
    p = identification_probability(tuples, "a", 0, X, z)            # identical after centring: d = 0 -> eps
    assert 0.999 < p <= 1.0 and math.isfinite(p)
    with pytest.raises(ValueError, match="true_index"):
        identification_probability(tuples, "a", 2, X, z)
    with pytest.raises(ValueError, match="both"):
        identification_probability(tuples, "a", 0, X, None)
    with pytest.raises(ValueError, match="2 x 3"):
        identification_probability(tuples, "a", 0, X[:, :2], z)
    with pytest.raises(ValueError, match="standardize"):
        identification_probability(tuples, "a", 0, X, z, standardize="column")
