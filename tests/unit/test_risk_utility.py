"""DU (paper 000 eq. 2.17-2.19): anonstream.risk.utility."""
from __future__ import annotations

import math

import numpy as np
import pytest

from anonstream.mixture.model import SphericalMixture
from anonstream.risk.utility import disclosure_utility, du_from_sums, utility_terms


def mixture(mu, rho, family="pkb"):
    mu = np.asarray(mu, dtype=np.float64)
    k = mu.shape[0]
    return SphericalMixture(family=family, mu=mu, rho=np.asarray(rho, dtype=np.float64), pi=np.full(k, 1.0 / k),
                            n_train=100, train_loglik=0.0, created_at=0.0)


def unit(v):
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def test_no_rows_is_none():
    m = mixture(np.eye(3)[:1], [0.5])
    assert disclosure_utility(m, np.zeros((0, 3)), np.zeros((0, 3))) is None
    assert du_from_sums(0.0, 0.0, 0) == (None, None)


@pytest.mark.parametrize("family", ["pkb", "scauchy"])
def test_unchanged_rows_give_one(family):
    rng = np.random.default_rng(0)
    m = mixture(unit(rng.normal(size=(3, 8))), [0.9, 0.6, 0.3], family)
    X = unit(rng.normal(size=(20, 8)))
    assert disclosure_utility(m, X, X.copy()) == pytest.approx(1.0, abs=1e-12)
    labels = rng.integers(0, 3, size=20)
    assert disclosure_utility(m, X, X.copy(), labels) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("family, rho", [("pkb", 0.95), ("scauchy", 0.8), ("pkb", 0.2)])
def test_du_falls_as_after_rows_move_away(family, rho):
    d = 16
    rng = np.random.default_rng(1)
    mu = unit(rng.normal(size=d))
    v = rng.normal(size=d)
    v = unit(v - (v @ mu) * mu)                       # orthogonal to mu
    m = mixture(mu[None, :], [rho], family)
    before = np.cos(0.1) * mu + np.sin(0.1) * v
    values = []
    for t in (0.1, 0.3, 0.6, 1.0, 1.6, 2.5):
        after = np.cos(t) * mu + np.sin(t) * v
        values.append(disclosure_utility(m, before[None, :], after[None, :], np.array([0])))
    assert values[0] == pytest.approx(1.0)
    assert all(a > b for a, b in zip(values, values[1:])), values
    assert all(math.isfinite(x) for x in values)


def test_hand_computed_positive_denominator_is_eq_2_19():
    # PKB, d = 3, mu = e1, rho = 0.5: log f(x) = log(1 - rho^2) - (d/2) log ||x - rho mu||^2
    m = mixture(np.eye(3)[:1], [0.5])
    e1, e2 = np.eye(3)[0], np.eye(3)[1]
    lb = math.log(0.75) - 1.5 * math.log(0.25)       # x = e1: ||e1 - 0.5 e1||^2 = 0.25 -> 1.7917595
    la = math.log(0.75) - 1.5 * math.log(1.25)       # x~ = e2: ||e2 - 0.5 e1||^2 = 1.25 -> -0.6223974
    terms = utility_terms(m, e1[None, :], e2[None, :], np.array([0]))
    assert terms.loglik_before == pytest.approx(lb, rel=1e-12)
    assert terms.loglik_after == pytest.approx(la, rel=1e-12)
    assert terms.regime == "ratio"
    assert terms.du == pytest.approx(la / lb, rel=1e-12)   # eq. 2.19 literally
    assert terms.du == pytest.approx(-0.3473666, abs=1e-6)


def test_hand_computed_negative_denominator_keeps_direction():
    m = mixture(np.eye(3)[:1], [0.5])
    e1, e2 = np.eye(3)[0], np.eye(3)[1]
    lb = math.log(0.75) - 1.5 * math.log(1.25)       # before x = e2: -0.622400
    la = math.log(0.75) - 1.5 * math.log(2.25)       # after  x~ = -e1: ||-1.5 e1||^2 = 2.25 -> -1.504077
    terms = utility_terms(m, e2[None, :], -e1[None, :], np.array([0]))
    assert terms.regime == "abs"
    assert la / lb > 1                                # the literal ratio would report a gain
    assert terms.du == pytest.approx(1 + (la - lb) / abs(lb), rel=1e-12)
    assert terms.du < 1


def test_two_rows_sum_before_dividing():
    m = mixture(np.eye(3)[:2], [0.5, 0.5])
    before = np.eye(3)[:2]                            # each at its own component's mean
    after = np.array([np.eye(3)[2], np.eye(3)[2]])
    lb = 2 * (math.log(0.75) - 1.5 * math.log(0.25))
    la = 2 * (math.log(0.75) - 1.5 * math.log(1.25))
    assert disclosure_utility(m, before, after, np.array([0, 1])) == pytest.approx(la / lb, rel=1e-12)
    # labels default to the MAP components of the before rows: the same here
    assert disclosure_utility(m, before, after) == pytest.approx(la / lb, rel=1e-12)


def test_groups_add_up():
    rng = np.random.default_rng(3)
    m = mixture(unit(rng.normal(size=(2, 6))), [0.9, 0.7])
    X, Y = unit(rng.normal(size=(10, 6))), unit(rng.normal(size=(10, 6)))
    whole = utility_terms(m, X, Y)
    parts = utility_terms(m, X[:4], Y[:4]) + utility_terms(m, X[4:], Y[4:])
    assert parts.du == pytest.approx(whole.du, rel=1e-12)


def test_zero_denominator_is_finite():
    assert du_from_sums(-1.0, 0.0, 2, abs_terms_before=4.0) == (0.75, "abs_terms")
    assert du_from_sums(-1.0, 0.0, 2, abs_terms_before=0.0) == (0.5, "per_row")
    assert du_from_sums(0.0, 0.0, 2, abs_terms_before=0.0) == (1.0, "per_row")


def test_bad_inputs_raise():
    m = mixture(np.eye(3)[:1], [0.5])
    with pytest.raises(ValueError):
        disclosure_utility(m, np.eye(3)[:2], np.eye(3)[:1])
    with pytest.raises(ValueError):
        disclosure_utility(m, np.full((1, 3), np.nan), np.eye(3)[:1])
    with pytest.raises(ValueError):
        disclosure_utility(m, np.eye(3)[:1], np.eye(3)[:1], np.array([1]))
    with pytest.raises(ValueError):
        disclosure_utility(m, np.eye(4)[:1], np.eye(4)[:1])
