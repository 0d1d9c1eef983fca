"""Spherical mixtures (paper 000, §2.2, eq. 2.1-2.3): densities, EM, assignment, serialization.

``spheroids`` (the paper authors' GPL-3.0 package) is only the test oracle here.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.special import logsumexp

from anonstream.mixture.em import fit_mixture, select_k
from anonstream.mixture.families import Family, log_density
from anonstream.mixture.model import SphericalMixture


def unit(a: np.ndarray) -> np.ndarray:
    return a / np.linalg.norm(a, axis=-1, keepdims=True)


def random_model(rng, k=3, d=8, family="pkb") -> SphericalMixture:
    return SphericalMixture(
        family=family,
        mu=unit(rng.normal(size=(k, d))),
        rho=rng.uniform(0.2, 0.9, size=k),
        pi=rng.dirichlet(np.ones(k)),
        n_train=1000,
        train_loglik=123.0,
        created_at=1.7e9,
        embedding_model="test-model",
    )


@pytest.fixture
def spheroids_cpp():
    pytest.importorskip("spheroids")
    from spheroids import cpp

    return cpp


def sample_mixture(cpp, family, mu, rho, n_per):
    """Points from spheroids' samplers (rpkbd / rspcauchy), stacked component by component."""
    draw = cpp.rpkbd if family == "pkb" else cpp.rspcauchy
    return np.vstack([draw(int(m), float(r), np.asarray(u, dtype=np.float64)) for u, r, m in zip(mu, rho, n_per)])


@pytest.mark.parametrize("family", ["pkb", "scauchy"])
@pytest.mark.parametrize("d", [3, 384])
def test_log_density_matches_spheroids(spheroids_cpp, family, d):
    rng = np.random.default_rng(d)
    X = unit(rng.normal(size=(500, d)))
    mu = unit(rng.normal(size=(4, d)))
    X[:5] = mu[1]  # x = mu: the density's peak, where 1 + rho^2 - 2 rho mu.x is smallest
    rho = np.array([0.0, 0.3, 0.9, 0.999])
    oracle = spheroids_cpp.loglik_pkbd if family == "pkb" else spheroids_cpp.loglik_spcauchy
    expected = np.stack([oracle(X, mu[j], rho[j]) for j in range(4)], axis=1)
    got = log_density(X, mu, rho, family)
    assert got.shape == (500, 4) and got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-8)
    # the mixture log-likelihood (eq. 2.3) through the model, which stores mu in float32
    # (off the peak rows, where float32 rounding of x and mu is far below ||x - rho mu||^2)
    pi = np.array([0.1, 0.2, 0.3, 0.4])
    model = SphericalMixture(family, mu, rho, pi, n_train=500, train_loglik=0.0, created_at=0.0)
    mu32 = model.mu.astype(np.float64)
    expected = np.stack([oracle(X[5:], mu32[j], rho[j]) for j in range(4)], axis=1)
    total = logsumexp(expected + np.log(pi), axis=1).sum()
    assert model.log_density(X[5:]).sum() == pytest.approx(total, rel=1e-8)
    assert model.log_density(X[5:].astype(np.float32)).sum() == pytest.approx(total, rel=1e-5)


def test_log_density_closed_forms():
    """eq. 2.1 / 2.2 by hand; rho = 0 is the uniform law (log f = 0); both coincide for d = 2."""
    rng = np.random.default_rng(1)
    x = unit(rng.normal(size=(6, 5)))
    mu = unit(rng.normal(size=5))
    rho = 0.7
    nrm2 = np.sum((x - rho * mu) ** 2, axis=1)
    np.testing.assert_allclose(log_density(x, mu, rho, "pkb")[:, 0], np.log((1 - rho**2) / nrm2**2.5))
    np.testing.assert_allclose(log_density(x, mu, rho, "scauchy")[:, 0], 4 * np.log((1 - rho**2) / nrm2))
    assert np.all(log_density(x, mu, 0.0, Family.SCAUCHY) == 0.0)
    x2, mu2 = unit(rng.normal(size=(6, 2))), unit(rng.normal(size=2))
    np.testing.assert_allclose(log_density(x2, mu2, rho, "pkb"), log_density(x2, mu2, rho, "scauchy"))


def test_log_density_stable_near_the_peak():
    """rho -> 1 at x = mu, where ||x - rho mu||^2 = (1 - rho)^2: full precision, vs 50 digits."""
    mpmath = pytest.importorskip("mpmath")
    d = 10
    mu = np.eye(d)[:1]
    for r in (1 - 1e-9, 1 - 1e-14):
        rho = mpmath.mpf(r)
        with mpmath.workdps(50):
            pkb = mpmath.log(1 - rho**2) - d * mpmath.log(1 - rho)  # (1 - rho^2) / (1 - rho)^d
            cauchy = (d - 1) * (mpmath.log(1 - rho**2) - 2 * mpmath.log(1 - rho))
        assert log_density(mu, mu, r, "pkb")[0, 0] == pytest.approx(float(pkb), rel=1e-13)
        assert log_density(mu, mu, r, "scauchy")[0, 0] == pytest.approx(float(cauchy), rel=1e-13)


@pytest.mark.parametrize(
    "family, rho",
    [("pkb", [0.6, 0.75, 0.9]), ("scauchy", [0.3, 0.45, 0.6])],
)
def test_fit_recovers_known_mixture(spheroids_cpp, family, rho):
    rng = np.random.default_rng(7)
    d, n = 32, 6000
    mu = unit(rng.normal(size=(3, d)))
    pi = np.array([0.5, 0.3, 0.2])
    X = sample_mixture(spheroids_cpp, family, mu, rho, np.round(pi * n))
    model = fit_mixture(X, family, 3, seed=0)
    assert model.converged and model.k == 3 and model.n_train == n
    cos = model.mu.astype(np.float64) @ mu.T
    rows, cols = linear_sum_assignment(-cos)
    assert np.all(cos[rows, cols] >= 0.99)
    np.testing.assert_allclose(model.pi[rows], pi[cols], atol=0.02)
    np.testing.assert_allclose(model.rho[rows], np.asarray(rho)[cols], atol=0.03)
    assert model.sanity_errors() == []
    # the recorded log-likelihood is that of the returned parameters
    assert model.log_density(X).sum() == pytest.approx(model.train_loglik, rel=1e-6)


@pytest.mark.parametrize("family", ["pkb", "scauchy"])
def test_em_never_decreases_the_likelihood(family):
    rng = np.random.default_rng(3)
    X = unit(rng.normal(size=(400, 6)) + 2.0 * np.repeat(np.eye(6)[:4], 100, axis=0))
    fits = [fit_mixture(X, family, 4, max_iter=t, min_weight=0.0, tol=0.0, n_init=1) for t in range(12)]
    lls = [fit.train_loglik for fit in fits]
    assert np.all(np.diff(lls) >= -1e-9 * np.abs(lls[1:]))
    assert lls[-1] > lls[0]


def test_min_weight_drops_components():
    rng = np.random.default_rng(4)
    X = unit(rng.normal(size=(600, 5)) + 3.0 * np.repeat(np.eye(5)[:2], 300, axis=0))
    loose = fit_mixture(X, "pkb", 8, min_weight=0.0, max_iter=200)
    strict = fit_mixture(X, "pkb", 8, min_weight=0.2, max_iter=200)
    assert loose.k == 8
    assert strict.k < 8 and np.all(strict.pi >= 0.2)
    assert strict.pi.sum() == pytest.approx(1.0)
    assert strict.mu.shape == (strict.k, 5) and strict.rho.shape == (strict.k,)


def test_warm_start_and_seed_are_deterministic():
    rng = np.random.default_rng(5)
    X = unit(rng.normal(size=(300, 4)) + 2.0 * np.repeat(np.eye(4)[:3], 100, axis=0))
    a = fit_mixture(X, "scauchy", 3, seed=11)
    b = fit_mixture(X, "scauchy", 3, seed=11)
    np.testing.assert_array_equal(a.mu, b.mu)
    warm = fit_mixture(X, "scauchy", 3, init=a)
    assert warm.n_iter <= 1 and warm.train_loglik == pytest.approx(a.train_loglik, rel=1e-6)
    with pytest.raises(ValueError):
        fit_mixture(X, "pkb", 3, init=a)  # a scauchy start for a PKB fit
    X[0, 0] = np.nan
    with pytest.raises(ValueError):
        fit_mixture(X, "scauchy", 3)


def clusters_with_a_small_group(small: int) -> np.ndarray:
    """Six clusters of 20-40 points on S^383 (cosine ~0.7 to their centre) and one group of ``small`` points."""
    rng = np.random.default_rng(0)
    centres = unit(rng.normal(size=(7, 384)))
    sizes = np.array([40, 40, 40, 30, 30, 20, small])
    return unit(np.repeat(centres, sizes, axis=0) + 0.03 * rng.normal(size=(sizes.sum(), 384)))


def test_a_component_collapsing_onto_a_point_is_dropped():
    """The unbounded likelihood (paper 000, §2.2.3): the component seeded on a group of 3 points puts mu on
    one of them and climbs rho -> 1 for all 500 iterations without the stopping rule firing; with the
    collapse rule (max_rho) it is dropped, its points join the other components, EM converges."""
    X = clusters_with_a_small_group(3)
    singular = fit_mixture(X, "pkb", 7, n_init=1, max_rho=1.0)
    assert singular.n_iter == 500 and not singular.converged
    assert 1.0 - singular.rho.max() < 1e-6 and singular.pi.min() * len(X) == pytest.approx(3.0, abs=0.01)
    fit = fit_mixture(X, "pkb", 7, n_init=1)
    assert fit.converged and fit.n_iter < 50
    assert fit.k == 6 and np.all(fit.rho < 0.999) and fit.pi.min() * len(X) >= 19.9
    assert fit.sanity_errors() == []


@pytest.mark.parametrize("family", ["pkb", "scauchy"])
def test_the_collapse_rule_leaves_ordinary_fits_unchanged(spheroids_cpp, family):
    """Where no component passes max_rho the fit is the same to the bit as without the rule: on the
    spheroids-sampled mixture of test_fit_recovers_known_mixture and on clusters with a group of 4 or 6
    points (which get a component of their own, rho < 0.9)."""
    rng = np.random.default_rng(7)
    mu = unit(rng.normal(size=(3, 32)))
    rho = [0.6, 0.75, 0.9] if family == "pkb" else [0.3, 0.45, 0.6]
    samples = [sample_mixture(spheroids_cpp, family, mu, rho, [1000, 600, 400])]
    samples += [clusters_with_a_small_group(small) for small in (4, 6)]
    for X in samples:
        k = 3 if X.shape[1] == 32 else 7
        before = fit_mixture(X, family, k, max_rho=1.0)
        after = fit_mixture(X, family, k)
        assert after.k == k and after.rho.max() < 0.999
        for name in ("mu", "rho", "pi"):
            np.testing.assert_array_equal(getattr(after, name), getattr(before, name))
        assert (after.n_iter, after.train_loglik) == (before.n_iter, before.train_loglik)


def test_select_k_prefers_the_true_number_of_clusters():
    rng = np.random.default_rng(6)
    X = unit(rng.normal(size=(900, 6)) + 4.0 * np.repeat(np.eye(6)[:3], 300, axis=0))
    assert select_k(X, "pkb", [1, 2, 3, 5]).k == 3


@pytest.mark.parametrize("family", ["pkb", "scauchy"])
def test_assign_matches_naive_posterior(family):
    rng = np.random.default_rng(8)
    model = random_model(rng, k=5, d=16, family=family)
    X = unit(rng.normal(size=(200, 16)) + 1.5 * model.mu[rng.integers(5, size=200)])
    labels, post, logdens = model.assign(X)
    dens = np.exp(log_density(X, model.mu, model.rho, family)) * model.pi  # pi_k f(x | phi_k)
    posterior = dens / dens.sum(axis=1, keepdims=True)
    np.testing.assert_array_equal(labels, posterior.argmax(axis=1))
    np.testing.assert_allclose(post, posterior.max(axis=1), rtol=1e-10)
    np.testing.assert_allclose(logdens, np.log(dens.sum(axis=1)), rtol=1e-10)
    np.testing.assert_allclose(model.log_density(X), logdens)
    labels32, post32, logdens32 = model.assign(X.astype(np.float32))
    assert np.mean(labels32 == labels) > 0.99
    np.testing.assert_allclose(logdens32, logdens, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError):
        model.assign(X[:, :8])


def test_npz_and_bytes_round_trip(tmp_path):
    model = random_model(np.random.default_rng(9), k=4, d=12, family="scauchy")
    path = tmp_path / "mixture.npz"
    model.save_npz(path)
    with np.load(path) as z:
        assert z["mu"].shape == (4, 12) and z["rho"].shape == (4,) and z["pi"].shape == (4,)
        assert str(z["family"]) == "scauchy"
    for loaded in (SphericalMixture.load_npz(path), SphericalMixture.from_bytes(model.to_bytes())):
        assert loaded.family is Family.SCAUCHY and loaded.embedding_model == "test-model"
        assert (loaded.n_train, loaded.train_loglik, loaded.created_at) == (1000, 123.0, 1.7e9)
        np.testing.assert_array_equal(loaded.mu, model.mu)
        np.testing.assert_array_equal(loaded.rho, model.rho)
        np.testing.assert_array_equal(loaded.pi, model.pi)
        assert loaded.mu.dtype == np.float32
    assert len(model.to_bytes()) < 4 * 4 * 12 + 4096


def test_sanity_errors_catch_broken_models():
    rng = np.random.default_rng(10)
    assert random_model(rng).sanity_errors() == []
    nan_mu = random_model(rng)
    nan_mu.mu[0, 0] = np.nan
    assert any("mu has NaN" in e for e in nan_mu.sanity_errors())
    for bad in (1.0, -0.1, np.inf):
        m = random_model(rng)
        m.rho[1] = bad
        assert any("rho outside [0, 1)" in e for e in m.sanity_errors()), bad
    zero = random_model(rng)
    zero.pi = np.array([0.0, 0.5, 0.5])
    assert any("zero or negative weight" in e for e in zero.sanity_errors())
    empty = random_model(rng)
    empty.pi = np.array([1e-5, 0.5 - 1e-5, 0.5])
    assert any("fewer than one" in e for e in empty.sanity_errors())
    skewed = random_model(rng)
    skewed.mu[2] *= 1.1
    assert any("not unit" in e for e in skewed.sanity_errors())
    unnormalized = random_model(rng)
    unnormalized.pi = unnormalized.pi * 2
    assert any("sum to" in e for e in unnormalized.sanity_errors())
    assert SphericalMixture("pkb", np.zeros((0, 4)), [], [], 1, 0.0, 0.0).sanity_errors() == [
        "mixture has no components"
    ]
