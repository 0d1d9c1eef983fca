"""EM for PKB and spherical Cauchy mixtures (paper 000, §2.2.3, eq. 2.1-2.3).

E-step: responsibilities r_ik proportional to pi_k f(x_i | mu_k, rho_k) from one product X M^T.
Components whose weight falls below ``min_weight`` (the paper's epsilon) are dropped and the
responsibilities renormalized, as in the authors' ``spheroids`` EM.

M-step (for both families, in nu = rho mu): with q_ik = ||x_i - rho_k mu_k||^2 at the current
parameters, concavity of log gives log q <= log q_ik + q / q_ik - 1, so the expected complete-data
log-likelihood of component k is minorized by a function concave in nu whose maximizer is

    mu_k  proportional to  s_k = sum_i r_ik x_i / q_ik,
    rho_k solves           rho (a_k + c W_k / (1 - rho^2)) = ||s_k||,

with a_k = sum_i r_ik / q_ik, W_k = sum_i r_ik, c = 2/d (PKB) or 1 (spherical Cauchy). For PKB
this is the M-step of ``spheroids`` (PKBD mixtures: Golzy & Markatou 2020); for the spherical
Cauchy ``spheroids`` instead iterates, per component, the Moebius fixed point of Kato & McCullagh
(2020) to convergence, whose fixed point is the same stationarity condition. Each step cannot
decrease the likelihood (generalized EM) and costs one more product R^T X: an iteration is two
matmuls, for all components at once.

Collapse: the likelihood of eq. 2.3 is unbounded (paper 000, §2.2.3, after Chen et al. 2008): a component
whose mu sits on one data point gains (d - 1) log 1/(1 - rho) at that point and loses only about
log 1/(1 - rho) at each other point it holds, so on S^383 EM can climb rho -> 1 without end; each step
raises the log-likelihood by thousands of nats and the relative stopping rule never fires (measured on
MiniLM chunks: 500 iterations). The paper follows Chen & Tan (2009): keep EM's local maxima but rule out
the poor ones. Here a component whose concentration passes ``max_rho`` is such a singular ascent (a point
mass, not a cluster) and is dropped like a component under the weight epsilon, the rest renormalized;
fits in which no component gets there are unchanged.
"""
from __future__ import annotations

import time

import numpy as np

from .families import Family, log_density_from_sq_dist, sq_dist
from .model import SphericalMixture

_RHO_MAX = 1.0 - 1e-12
_SEED_TRIALS = 8


def _unit_rows(X: np.ndarray) -> np.ndarray:
    X = np.array(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"expected a non-empty (n, d) array, got shape {X.shape}")
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0.0):
        raise ValueError("X has zero, NaN or inf rows")
    X /= norms
    return X


def _kmeanspp(X: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Greedy k-means++ seeding on the sphere (k x d centres).

    D^2 = ||x - c||^2 / 2 = 1 - x.c to the nearest centre. Each step draws ``_SEED_TRIALS``
    candidates, half with probability proportional to D^2 (k-means++), half proportional to
    (D^2)^16, and keeps the one that lowers sum D^2 most. In high dimension D^2 is close to 1 for
    every point of a cluster that has no centre yet, only a little below 1 in clusters that have
    one, so plain D^2 sampling keeps missing small clusters; the sharpened draws find them, and the
    greedy choice rejects an isolated outlier they may pick.
    """
    n = X.shape[0]
    idx = [int(rng.integers(n))]
    dist = np.maximum(1.0 - X @ X[idx[0]], 0.0)
    for _ in range(1, k):
        cand = []
        for weight in (dist, dist**16):
            total = weight.sum()
            p = weight / total if total > 0 else None
            cand.append(rng.choice(n, size=_SEED_TRIALS // 2, p=p))
        cand = np.concatenate(cand)
        new = np.minimum(dist[:, None], np.maximum(1.0 - X @ X[cand].T, 0.0))
        best = int(new.sum(axis=0).argmin())
        idx.append(int(cand[best]))
        dist = new[:, best]
    return X[idx].copy()


def _solve_rho(a: np.ndarray, cw: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Root in [0, 1) of rho (a + cw / (1 - rho^2)) = s (left side increasing), by bisection."""
    lo = np.zeros_like(s)
    hi = np.ones_like(s)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        high = mid * (a + cw / ((1.0 - mid) * (1.0 + mid))) > s
        hi = np.where(high, mid, hi)
        lo = np.where(high, lo, mid)
    return np.minimum(0.5 * (lo + hi), _RHO_MAX)


def _m_step(X, R, q, family: Family):
    """Minorize-maximize update of (mu, rho) given responsibilities R and q = ||x - rho mu||^2."""
    c = 2.0 / X.shape[1] if family is Family.PKB else 1.0
    Rq = R / q
    S = Rq.T @ X
    s = np.linalg.norm(S, axis=1)
    mu = S / s[:, None]
    rho = _solve_rho(Rq.sum(axis=0), c * R.sum(axis=0), s)
    return mu, rho


def _e_step(X, mu, rho, log_pi, family: Family):
    """(log-likelihood per point, log joint n x K, q n x K)."""
    q = sq_dist(X @ mu.T, rho)
    L = log_density_from_sq_dist(q, rho, family, X.shape[1])
    L += log_pi
    top = L.max(axis=1, keepdims=True)
    ll = top[:, 0] + np.log(np.exp(L - top).sum(axis=1))
    return ll, L, q


def _start(X, family: Family, centres):
    """(mu, rho, pi) from hard assignment to the nearest centre and one M-step."""
    cos = X @ centres.T
    R = np.zeros_like(cos)
    R[np.arange(X.shape[0]), cos.argmax(axis=1)] = 1.0
    R = R[:, R.sum(axis=0) > 0]
    mu, rho = _m_step(X, R, np.ones_like(R), family)
    return mu, rho, R.mean(axis=0)


def _run_em(X, family: Family, mu, rho, pi, min_weight: float, max_iter: int, tol: float, max_rho: float):
    """EM from (mu, rho, pi); returns (mu, rho, pi, loglik, n_iter, converged). Components lighter than
    ``min_weight`` or more concentrated than ``max_rho`` (collapsing onto a point) are dropped."""
    prev = -np.inf
    n_iter = 0
    while True:
        ll_i, L, q = _e_step(X, mu, rho, np.log(pi), family)
        loglik = float(ll_i.sum())
        if abs(loglik - prev) <= tol * (abs(loglik) + 1.0):
            return mu, rho, pi, loglik, n_iter, True
        if n_iter == max_iter:
            return mu, rho, pi, loglik, n_iter, False
        prev = loglik
        L -= ll_i[:, None]
        R = np.exp(L)
        pi = R.mean(axis=0)
        keep = (pi >= min_weight) & (pi > 0.0) & (rho < max_rho)
        keep[pi.argmax()] = True
        if not keep.all():  # drop light (the paper's epsilon) and collapsing components, renormalize the rest
            L = L[:, keep]
            L -= L.max(axis=1, keepdims=True)
            R = np.exp(L)
            R /= R.sum(axis=1, keepdims=True)
            pi = R.mean(axis=0)
            mu, rho, q = mu[keep], rho[keep], q[:, keep]
            prev = -np.inf  # a different model: no convergence test against the old one
        mu, rho = _m_step(X, R, q, family)
        n_iter += 1


def fit_mixture(
    X: np.ndarray,
    family: Family | str,
    k: int,
    *,
    min_weight: float = 1e-3,
    max_iter: int = 500,
    tol: float = 1e-6,
    seed: int = 0,
    init: str | SphericalMixture = "kmeans++",
    n_init: int = 4,
    max_rho: float = 0.999,
    embedding_model: str = "",
) -> SphericalMixture:
    """Fit a K-component ``family`` mixture (eq. 2.3) to the rows of X by (generalized) EM.

    Stops when the log-likelihood changes by at most ``tol * (|loglik| + 1)`` between iterations
    (``converged``) or after ``max_iter`` M-steps. ``init`` is ``"kmeans++"`` (greedy seeding on
    the sphere, then hard assignment to the nearest seed; ``n_init`` seedings, the fit with the
    highest log-likelihood wins: about one start in four ends in a poor local maximum) or a fitted
    mixture to start from (warm refit; ``k``, ``seed`` and ``n_init`` are then unused). Rows of X
    are normalized to unit length; ``seed`` fixes the result.

    A component whose concentration reaches ``max_rho`` is dropped as collapsing onto a point (see the
    module docstring): with the default 0.999 its members would lie within about 1 - 1e-3 cosine of its
    centre, near-identical text for sentence embeddings, while clusters of distinct chunks fit at
    rho <= 0.9. ``max_rho=1`` turns the rule off (the unbounded likelihood's EM as before).
    """
    family = Family(family)
    X = _unit_rows(X)
    n, d = X.shape
    if isinstance(init, SphericalMixture):
        if init.dim != d or init.family is not family:
            raise ValueError(f"init is a {init.family.value} mixture on S^{init.dim - 1}, X is on S^{d - 1}")
        starts = [(_unit_rows(init.mu), init.rho.copy(), init.pi / init.pi.sum())]
    elif init == "kmeans++":
        if not 1 <= k <= n:
            raise ValueError(f"k={k} must be in [1, n={n}]")
        rng = np.random.default_rng(seed)
        starts = [_start(X, family, _kmeanspp(X, k, rng)) for _ in range(n_init)]
    else:
        raise ValueError(f"unknown init {init!r}")
    fits = [_run_em(X, family, *start, min_weight, max_iter, tol, max_rho) for start in starts]
    mu, rho, pi, loglik, n_iter, converged = max(fits, key=lambda fit: fit[3])
    return SphericalMixture(
        family=family,
        mu=mu,
        rho=rho,
        pi=pi,
        n_train=n,
        train_loglik=loglik,
        created_at=time.time(),
        embedding_model=embedding_model,
        n_iter=n_iter,
        converged=converged,
    )


def n_parameters(model: SphericalMixture) -> int:
    """Free parameters: K (d - 1) locations + K concentrations + K - 1 weights."""
    return model.k * (model.dim + 1) - 1


def select_k(
    X: np.ndarray, family: Family | str, ks, criterion: str = "bic", **fit_kwargs
) -> SphericalMixture:
    """Fit one mixture per K in ``ks`` and return the one with the lowest BIC (or AIC).

    BIC = -2 loglik + p log n, AIC = -2 loglik + 2 p, with p from ``n_parameters``.
    """
    if criterion not in ("bic", "aic"):
        raise ValueError(f"unknown criterion {criterion!r}")
    best, best_score = None, np.inf
    for k in ks:
        model = fit_mixture(X, family, k, **fit_kwargs)
        penalty = np.log(model.n_train) if criterion == "bic" else 2.0
        score = -2.0 * model.train_loglik + penalty * n_parameters(model)
        if score < best_score:
            best, best_score = model, score
    return best
