"""k-anonymity lattice search (against brute force) and the release metrics (hand-computed cases)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonstream.anonymity.lattice import QuasiIdentifier, brute_force, evaluate, search
from anonstream.anonymity.metrics import release_metrics

# two small hierarchies: letters a-d (pairs, then *) and digits 0-2 (then *)
LETTERS = {"a": ("a", "ab", "*"), "b": ("b", "ab", "*"), "c": ("c", "cd", "*"), "d": ("d", "cd", "*")}
DIGITS = {"0": ("0", "*"), "1": ("1", "*"), "2": ("2", "*")}


def test_metrics_hand_computed():
    # classes of 2, 3 and 5 kept, 2 rows suppressed: 10/12 retained, C_avg = (10/3)/2
    m = release_metrics(np.array([2, 3, 5]), np.array([1, 2, 2]), suppressed=2, suppressed_distinct=1)
    assert (m.records, m.retained, m.classes, m.achieved_k, m.distinct_l) == (12, 10, 3, 2, 1)
    assert m.records_retained == pytest.approx(10 / 12)
    assert m.c_avg == pytest.approx(10 / 3 / 2)


def test_paper_convention_drops_the_largest_class():
    # suppressed block (2) is not the largest: the paper's code drops the class of 5 instead
    m = release_metrics(np.array([2, 3, 5]), None, suppressed=2, convention="paper")
    assert (m.retained, m.classes, m.achieved_k) == (7, 3, 2)
    assert m.c_avg == pytest.approx(7 / 3 / 2)
    # suppressed block (6) is the largest: same as counting it explicitly
    explicit = release_metrics(np.array([2, 3, 5]), None, suppressed=6)
    assert release_metrics(np.array([2, 3, 5]), None, suppressed=6, convention="paper") == explicit


def test_evaluate_suppresses_small_and_undiverse_classes():
    qis = [QuasiIdentifier.from_paths("letter", list("aabbbc"), LETTERS)]
    sensitive = np.array([0, 1, 0, 0, 0, 1])
    leaf = evaluate(qis, (0,), k=2, l=2, sensitive=sensitive, suppression_limit=0.9)
    # a: 2 rows, 2 values kept; b: 3 rows, one value -> suppressed; c: 1 row -> suppressed
    assert leaf.suppressed == 4 and list(leaf.class_sizes) == [2] and leaf.feasible
    assert not evaluate(qis, (0,), k=2, l=2, sensitive=sensitive, suppression_limit=0.5).feasible
    pairs = evaluate(qis, (1,), k=2, l=2, sensitive=sensitive, suppression_limit=0.0)
    # ab: 5 rows with both values; cd: 1 row suppressed
    assert pairs.suppressed == 1 and list(pairs.class_sizes) == [5]


def test_loss_is_zero_at_the_leaves_and_one_at_the_root():
    qis = [QuasiIdentifier.from_paths("letter", list("abcd"), LETTERS), QuasiIdentifier.from_paths("d", list("0120"), DIGITS)]
    assert evaluate(qis, (0, 0), k=1).loss == pytest.approx(0.0)
    assert evaluate(qis, (2, 1), k=1).loss == pytest.approx(1.0)
    # letters at pairs: each value covers 2 of 4 leaves -> (0.5 - 0.25) / 0.75 = 1/3; digits exact
    assert evaluate(qis, (1, 0), k=1).loss == pytest.approx((1 + 1 / 3) ** 0.5 - 1)


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from("abcd"), st.sampled_from("012"), st.integers(0, 2)),
                     min_size=1, max_size=40),
       k=st.integers(1, 6), l=st.integers(1, 2), limit=st.sampled_from([0.0, 0.1, 0.3, 0.5]))
def test_search_matches_brute_force(rows, k, l, limit):
    qis = [QuasiIdentifier.from_paths("letter", [r[0] for r in rows], LETTERS),
           QuasiIdentifier.from_paths("digit", [r[1] for r in rows], DIGITS)]
    sensitive = np.array([r[2] for r in rows])
    found = search(qis, k, l, sensitive, limit).best
    oracle = brute_force(qis, k, l, sensitive, limit)
    assert (found is None) == (oracle is None)
    if found is not None:
        assert found.node == oracle.node and found.loss == pytest.approx(oracle.loss)
        assert found.metrics().achieved_k >= k or found.metrics().retained == 0
