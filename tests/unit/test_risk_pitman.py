"""Ewens-Pitman partition model, MLE and population uniques (paper 000 §2.4, eq. 2.10-2.16)."""
from __future__ import annotations

import itertools
import json
import math
from collections import Counter

import numpy as np
import pytest
from scipy.special import gammaln

from anonstream.cli import main
from anonstream.risk import pitman as P
from anonstream.risk import (disclosure_risk, fit_pitman, hessian, log_likelihood, p_hat, population_uniques,
                             sample_partition, score)


# ---------------------------------------------------------------- independent evaluations (no scipy)


def crp_log_eppf(sizes, theta, alpha):
    """log of the probability of one seating with these table sizes: product over customers of the
    Chinese-restaurant probabilities, seated table by table (exchangeable, so the order is free)."""
    terms, m, k = [], 0, 0
    for size in sizes:
        for c in range(size):
            if m == 0:
                p = 1.0
            elif c == 0:
                p = (theta + k * alpha) / (theta + m)
            else:
                p = (c - alpha) / (theta + m)
            terms.append(math.log(p))
            if c == 0:
                k += 1
            m += 1
    return math.fsum(terms)


def log_count(sizes):
    """log of the number of set partitions of n labelled items with these block sizes."""
    n, f = sum(sizes), Counter(sizes)
    return math.lgamma(n + 1) - math.fsum(math.lgamma(c + 1) + c * math.lgamma(j + 1) for j, c in f.items())


def direct_loglik(sizes, theta, alpha):
    return crp_log_eppf(sizes, theta, alpha) + log_count(sizes)


def set_partitions(items):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in set_partitions(rest):
        for i in range(len(part)):
            yield part[:i] + [[first] + part[i]] + part[i + 1:]
        yield [[first]] + part


# ------------------------------------------------------------------------------ log-likelihood


@pytest.mark.parametrize("theta,alpha", [(2.5, 0.3), (0.7, 0.0), (-0.2, 0.45), (40.0, 0.9), (1e4, 1e-6)])
@pytest.mark.parametrize("sizes", [[3, 1, 1, 2, 5, 1], [1, 2], [7, 7, 1, 1, 1, 2, 2, 30, 4]])
def test_loglik_equals_crp_product(sizes, theta, alpha):
    ours = log_likelihood(theta, alpha, sizes)
    ref = direct_loglik(sizes, theta, alpha)
    assert ours == pytest.approx(ref, rel=1e-9, abs=1e-12)
    assert log_likelihood(theta, alpha, sizes, constant=False) == pytest.approx(crp_log_eppf(sizes, theta, alpha),
                                                                                rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("theta,alpha", [(1.3, 0.4), (0.5, 0.0), (-0.5, 0.8)])
def test_eq_2_10_is_the_law_of_the_size_profile(theta, alpha):
    """Enumerate all set partitions of 7 items: P(profile) = sum of their CRP probabilities, and sums to 1."""
    by_profile: dict[tuple, float] = {}
    for part in set_partitions(list(range(7))):
        key = tuple(sorted(len(b) for b in part))
        # CRP probability of this labelled partition, items arriving 0, 1, ..., 6
        logp, seen = 0.0, []
        for x in range(7):
            block = next(b for b in part if x in b)
            before = [y for y in block if y < x]
            if x == 0:
                pass
            elif not before:
                logp += math.log((theta + len(seen) * alpha) / (theta + x))
            else:
                logp += math.log((len(before) - alpha) / (theta + x))
            if not before:
                seen.append(block)
        by_profile[key] = by_profile.get(key, 0.0) + math.exp(logp)
    assert len(by_profile) == 15                                   # integer partitions of 7
    assert math.fsum(by_profile.values()) == pytest.approx(1.0, abs=1e-12)
    for profile, prob in by_profile.items():
        if len(profile) in (1, 7):
            continue
        assert math.exp(log_likelihood(theta, alpha, list(profile))) == pytest.approx(prob, rel=1e-9)


def test_ladder_closed_form_equals_direct_sum():
    for base, step, m in [(3.0, 0.5, 40), (-0.3, 0.4, 25), (50.0, 1.0, 19999), (0.2, 0.97, 3000)]:
        closed = P._ladder(base, step, m)
        i = np.arange(1, m + 1, dtype=float)
        v = base + i * step
        direct = [np.sum(np.log(v)), np.sum(1 / v), np.sum(i / v), np.sum(1 / v**2), np.sum(i / v**2),
                  np.sum(i * i / v**2)]
        assert np.allclose(closed, direct, rtol=1e-10, atol=0)


@pytest.mark.parametrize("theta,alpha", [(12.0, 0.35), (0.8, 0.0), (-0.1, 0.6), (3e5, 1e-3), (7.0, 0.97)])
def test_gradient_and_hessian_match_finite_differences(theta, alpha):
    sizes = sample_partition(3000, 10.0, 0.5, np.random.default_rng(7)).tolist()
    g, H = score(theta, alpha, sizes), hessian(theta, alpha, sizes)
    ht = 1e-6 * max(1.0, abs(theta))
    ha = 1e-7 if alpha >= 1e-7 else 0.0
    ll = lambda t, a: log_likelihood(t, a, sizes)  # noqa: E731
    fd_t = (ll(theta + ht, alpha) - ll(theta - ht, alpha)) / (2 * ht)
    if ha:
        fd_a = (ll(theta, alpha + ha) - ll(theta, alpha - ha)) / (2 * ha)
    else:                                          # one-sided at alpha = 0
        fd_a = (-3 * ll(theta, 0.0) + 4 * ll(theta, 1e-7) - ll(theta, 2e-7)) / 2e-7
    assert g[0] == pytest.approx(fd_t, rel=1e-5, abs=1e-6 * abs(fd_t) + 1e-8)
    assert g[1] == pytest.approx(fd_a, rel=1e-5, abs=1e-6)
    fd_H0 = (score(theta + ht, alpha, sizes) - score(theta - ht, alpha, sizes)) / (2 * ht)
    assert np.allclose(H[:, 0], fd_H0, rtol=1e-5, atol=1e-9 * np.abs(H).max())
    if ha:
        fd_H1 = (score(theta, alpha + ha, sizes) - score(theta, alpha - ha, sizes)) / (2 * ha)
        assert np.allclose(H[:, 1], fd_H1, rtol=1e-5, atol=1e-9 * np.abs(H).max())


# ----------------------------------------------------------------------------------------- the MLE


def test_issue_target_n20000_theta50_alpha04():
    """Issue 10: |alpha_hat - alpha| <= 0.05, theta_hat within a factor 1.5, log L = independent to 1e-6."""
    sizes = sample_partition(20_000, 50.0, 0.4, np.random.default_rng(2024))
    fit = fit_pitman(sizes)
    assert abs(fit.alpha - 0.4) <= 0.05
    assert 50.0 / 1.5 <= fit.theta <= 50.0 * 1.5
    assert fit.loglik == pytest.approx(direct_loglik(sizes.tolist(), fit.theta, fit.alpha), rel=1e-6)
    assert fit.n == 20_000 and fit.k == len(sizes) and fit.s1 == int(np.sum(sizes == 1))


@pytest.mark.parametrize("n,theta,alpha,seed", [
    (20_000, 50.0, 0.4, 1), (5_000, 5.0, 0.7, 2), (2_000, 1.0, 0.5, 3), (50_000, 20.0, 0.85, 4),
    (3_000, -0.3, 0.6, 5), (10_000, 100.0, 0.0, 6), (8_000, 300.0, 0.2, 7),
])
def test_mle_recovers_parameters_within_3_se(n, theta, alpha, seed):
    sizes = sample_partition(n, theta, alpha, np.random.default_rng(seed))
    fit = fit_pitman(sizes)
    assert fit.se_theta is not None and fit.se_alpha is not None
    assert abs(fit.theta - theta) <= 3 * fit.se_theta
    assert abs(fit.alpha - alpha) <= 3 * fit.se_alpha
    # a maximum: the score vanishes (or points out of alpha >= 0 on the bound), the information is positive
    g = score(fit.theta, fit.alpha, sizes)
    assert abs(g[0]) * fit.se_theta < 1e-5
    if fit.boundary == "alpha=0":
        assert fit.alpha == 0.0 and g[1] <= 0.0
    else:
        assert abs(g[1]) * fit.se_alpha < 1e-5
    assert np.all(np.linalg.eigvalsh(-hessian(fit.theta, fit.alpha, sizes)) > 0)


def test_standard_errors_match_the_spread_of_replicates():
    fits = [fit_pitman(sample_partition(2_000, 10.0, 0.5, np.random.default_rng(100 + r))) for r in range(80)]
    alphas, thetas = np.array([f.alpha for f in fits]), np.array([f.theta for f in fits])
    se_a, se_t = np.median([f.se_alpha for f in fits]), np.median([f.se_theta for f in fits])
    assert 0.7 < alphas.std(ddof=1) / se_a < 1.4
    assert 0.6 < thetas.std(ddof=1) / se_t < 1.6
    assert abs(alphas.mean() - 0.5) < 3 * alphas.std(ddof=1) / math.sqrt(len(fits)) + 0.01


def test_newton_and_quasi_newton_fallback_agree():
    for seed, (theta, alpha) in enumerate([(50.0, 0.4), (2.0, 0.8), (80.0, 0.0)]):
        sizes = sample_partition(4_000, theta, alpha, np.random.default_rng(seed))
        a, b = fit_pitman(sizes), fit_pitman(sizes, method="lbfgsb")
        assert a.method == "newton" and b.method.startswith("lbfgsb")
        assert b.loglik == pytest.approx(a.loglik, rel=1e-10)
        assert b.theta == pytest.approx(a.theta, rel=1e-5, abs=1e-6)
        assert b.alpha == pytest.approx(a.alpha, rel=1e-5, abs=1e-7)


def test_mle_beats_a_grid():
    sizes = [1, 1, 1, 1, 2, 2, 3, 5, 1, 8, 1, 2]
    fit = fit_pitman(sizes)
    best = max(log_likelihood(t, a, sizes) for a in np.linspace(0, 0.99, 100)
               for t in np.geomspace(1e-3, 1e3, 100) - 0.999 * a)
    assert fit.loglik >= best - 1e-12


def test_large_n_is_cheap_through_frequencies():
    """n = 10^6 observations in 300 distinct sizes: the fit works on frequencies of frequencies."""
    rng = np.random.default_rng(11)
    sizes = np.minimum(rng.zipf(1.8, size=400_000), 300)
    fit = fit_pitman(sizes)
    assert fit.n == int(sizes.sum()) and math.isfinite(fit.loglik) and 0.0 <= fit.alpha < 1.0
    assert fit.se_alpha is not None and fit.se_alpha > 0


# ------------------------------------------------------------------------------ population uniques


def test_population_uniques_is_the_large_N_limit_of_eq_2_11():
    theta, alpha = 30.0, 0.6
    for N in (1e6, 1e9):
        exact = math.exp(math.log(N) + gammaln(theta + alpha + N - 1) - gammaln(theta + alpha)
                         - gammaln(theta + N) + gammaln(theta + 1))
        assert population_uniques(theta, alpha, N) == pytest.approx(exact, rel=1e3 / N ** (1 - alpha) + 1e3 / N)
    assert population_uniques(theta, alpha, 1e30) == pytest.approx(
        math.gamma(theta + 1) / math.gamma(theta + alpha) * 1e30 ** alpha, rel=1e-12)


def test_simulator_matches_expected_uniques_and_classes():
    """E s1 = n (theta + alpha)_(n-1) / (theta + 1)_(n-1) (eq. 2.11 at N = n); E K = theta/alpha ((theta + alpha)_n / theta_n - 1)."""
    n, theta, alpha, reps = 500, 4.0, 0.5, 400
    rng = np.random.default_rng(5)
    draws = [sample_partition(n, theta, alpha, rng) for _ in range(reps)]
    s1 = np.array([np.sum(d == 1) for d in draws])
    k = np.array([len(d) for d in draws])
    assert all(d.sum() == n for d in draws)
    e_s1 = n * math.exp(gammaln(theta + alpha + n - 1) - gammaln(theta + alpha) - gammaln(theta + n) + gammaln(theta + 1))
    e_k = theta / alpha * (math.exp(gammaln(theta + alpha + n) - gammaln(theta + alpha) - gammaln(theta + n)
                                    + gammaln(theta)) - 1)
    assert abs(s1.mean() - e_s1) < 4 * s1.std(ddof=1) / math.sqrt(reps)
    assert abs(k.mean() - e_k) < 4 * k.std(ddof=1) / math.sqrt(reps)


def test_p_hat_and_disclosure_risk():
    sizes = sample_partition(5_000, 20.0, 0.7, np.random.default_rng(9))
    fit = fit_pitman(sizes)
    N = 1e20
    s1_hat = fit.population_uniques(N)
    assert s1_hat == pytest.approx(math.exp(gammaln(fit.theta + 1) - gammaln(fit.theta + fit.alpha)) * N ** fit.alpha)
    assert fit.p_hat(N) == pytest.approx(s1_hat / fit.s1 * fit.n / N)
    assert p_hat(fit.theta, fit.alpha, fit.n, fit.s1, N) == pytest.approx(fit.p_hat(N))
    assert disclosure_risk(fit, 0, N) == 1.0
    assert fit.disclosure_risk(10, N) == pytest.approx(1 - 10 / fit.s1 * fit.p_hat(N))
    assert fit.disclosure_risk(fit.s1, N) == pytest.approx(1 - fit.p_hat(N))
    with pytest.raises(ValueError, match="swapped"):
        fit.disclosure_risk(fit.s1 + 1, N)
    with pytest.raises(ValueError, match="swapped"):
        fit.disclosure_risk(-1, N)
    with pytest.raises(ValueError, match="population"):
        fit.p_hat(fit.n - 1)


# -------------------------------------------------------------------------------------- edge cases


def test_empty_partition_is_an_error():
    with pytest.raises(ValueError, match="n = 0"):
        fit_pitman([])
    with pytest.raises(ValueError, match="n = 0"):
        log_likelihood(1.0, 0.5, [])


def test_one_class_is_an_error():
    with pytest.raises(ValueError, match="one class"):
        fit_pitman([12])


def test_all_singletons_is_the_alpha_1_boundary():
    """Every class of size 1: log L = sum log((theta + i alpha)/(theta + i)) < 0 rises to 0 as alpha -> 1
    or theta -> inf; the fit reports alpha = 1, theta = inf and every population element unique."""
    sizes = [1] * 50
    assert log_likelihood(5.0, 0.5, sizes) < log_likelihood(5.0, 0.99, sizes) < log_likelihood(5.0, 0.9999, sizes) < 0
    assert log_likelihood(1e9, 0.0, sizes) == pytest.approx(0.0, abs=1e-5)
    for s in ([1] * 50, [1]):
        fit = fit_pitman(s)
        assert fit.boundary == "singletons" and fit.alpha == 1.0 and fit.theta == math.inf and fit.loglik == 0.0
        assert fit.population_uniques(1e20) == 1e20 and fit.p_hat(1e20) == 1.0
        assert fit.disclosure_risk(fit.s1, 1e20) == pytest.approx(0.0)
        assert fit.as_dict(1e20)["theta"] is None


def test_alpha_zero_boundary_on_underdispersed_data():
    sizes = [2] * 50 + [3] * 10
    fit = fit_pitman(sizes)
    assert fit.alpha == 0.0 and fit.boundary == "alpha=0" and fit.s1 == 0
    assert score(fit.theta, 0.0, sizes)[0] == pytest.approx(0.0, abs=1e-8)
    assert score(fit.theta, 0.0, sizes)[1] < 0
    with pytest.raises(ValueError, match="s1 = 0"):
        fit.p_hat(1e10)
    assert fit.as_dict(1e10)["p_hat"] is None
    assert fit.disclosure_risk(0, 1e10) == 1.0


@pytest.mark.parametrize("theta,alpha", [(1.0, 1.0), (1.0, -0.1), (-0.5, 0.5), (0.0, 0.0), (math.inf, 0.3),
                                         (math.nan, 0.3), (1.0, math.nan)])
def test_parameters_out_of_range_are_errors(theta, alpha):
    with pytest.raises(ValueError):
        log_likelihood(theta, alpha, [1, 2, 3])


@pytest.mark.parametrize("sizes", [[0, 1], [1.5, 2], [[1, 2]], ["a"]])
def test_bad_sizes_are_errors(sizes):
    with pytest.raises(ValueError):
        fit_pitman(sizes)


def test_near_boundary_partitions_give_finite_answers():
    for sizes in ([1, 2], [2, 2], [1000, 1], [1] * 5 + [1000], [1] * 2000 + [2], [1] * 50 + [50]):
        fit = fit_pitman(sizes)
        d = fit.as_dict(1e20)
        json.dumps(d, allow_nan=False)
        assert all(math.isfinite(v) for v in (fit.theta, fit.alpha, fit.loglik, fit.se_theta, fit.se_alpha))
        assert 0.0 <= fit.alpha < 1.0 and fit.theta > -fit.alpha


def test_sample_partition_edges():
    rng = np.random.default_rng(0)
    assert sample_partition(0, 1.0, 0.5, rng).size == 0
    assert sample_partition(1, 1.0, 0.5, rng).tolist() == [1]
    with pytest.raises(ValueError):
        sample_partition(10, -0.6, 0.5, rng)
    with pytest.raises(ValueError):
        sample_partition(-1, 1.0, 0.5, rng)


# --------------------------------------------------------------------------------------------- CLI


def test_cli_prints_json(tmp_path, capsys):
    sizes = sample_partition(3_000, 10.0, 0.5, np.random.default_rng(3)).tolist()
    path = tmp_path / "sizes.json"
    path.write_text(json.dumps({"sizes": sizes}))
    assert main(["risk", "pitman", "--sizes", str(path), "--population", "1e20", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("theta", "alpha", "loglik", "population_uniques", "sample_uniques", "p_hat", "se_theta",
                "se_alpha", "n", "k"):
        assert key in out
    fit = fit_pitman(sizes)
    assert out["theta"] == pytest.approx(fit.theta) and out["p_hat"] == pytest.approx(fit.p_hat(1e20))
    assert out["n"] == 3_000 and out["sample_uniques"] == sizes.count(1)


def test_cli_reports_bad_input(tmp_path, capsys):
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"sizes": [5]}))
    assert main(["risk", "pitman", "--sizes", str(path), "--json"]) == 2
    assert "one class" in capsys.readouterr().err
    path.write_text(json.dumps([1, 2]))
    assert main(["risk", "pitman", "--sizes", str(path)]) == 2
