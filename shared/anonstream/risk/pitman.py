"""Ewens-Pitman partition model of cell counts and the swap risk DR (paper 000 §2.4, eq. 2.9-2.16).

Input: class sizes n_1..n_K (one per distinct tuple of the marginal table z_J, eq. 2.9), n = sum n_i.
The model is Ewens-Pitman's sampling formula (eq. 2.10) for the frequencies of frequencies
f_j = #{classes of size j}:

    P(f) = n! / prod_j (f_j! j!^f_j) * theta^(K up alpha) / theta^(n up 1) * prod_j ((1 - alpha)^(j-1 up 1))^f_j

with x^(k up a) = x (x + a) ... (x + (k - 1) a). Cancelling the common factor theta (which makes
theta in (-alpha, 0] well defined) gives the form of Hoshino (2001) and ARX's ModelPitman:

    log L = sum_{i=1}^{K-1} log(theta + i alpha) - sum_{i=1}^{n-1} log(theta + i)
            + sum_j f_j sum_{i=1}^{j-1} log(i - alpha) + log C,   log C = log n! - sum_j log(f_j! j!^f_j).

Every sum is evaluated with gammaln / digamma / polygamma in O(#distinct sizes) (a direct sum of
at most K terms is used only when theta / alpha >> K, where the closed forms cancel).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize
from scipy.special import digamma, gammaln, polygamma

__all__ = [
    "Frequencies", "PitmanFit", "disclosure_risk", "fit_pitman", "frequencies", "hessian", "log_likelihood",
    "p_hat", "population_uniques", "sample_partition", "score",
]

ALPHA_MAX = 1.0 - 1e-12     # largest alpha the optimizer visits (alpha < 1; log L -> -inf as alpha -> 1 once n_i >= 2)
_DIRECT_RATIO = 64.0        # closed forms when theta / step <= 64 (m + 1); a direct sum otherwise


@dataclass(frozen=True)
class Frequencies:
    """Frequencies of frequencies: distinct class sizes ``j`` (ascending) and their counts ``f``."""

    j: np.ndarray
    f: np.ndarray
    n: int
    k: int

    @property
    def s1(self) -> int:
        """Sample uniques s_1 = f_1 (classes of size 1)."""
        return int(self.f[0]) if self.k and self.j[0] == 1 else 0

    @property
    def log_constant(self) -> float:
        """log n! - sum_j (log f_j! + f_j log j!): the combinatorial factor of eq. 2.10."""
        return float(gammaln(self.n + 1) - np.sum(gammaln(self.f + 1.0)) - np.sum(self.f * gammaln(self.j + 1.0)))


def frequencies(sizes) -> Frequencies:
    """Class sizes (positive integers; an empty list is n = 0) to frequencies of frequencies."""
    if isinstance(sizes, Frequencies):
        return sizes
    arr = np.asarray(sizes)
    if arr.ndim != 1:
        raise ValueError(f"class sizes must be a flat list, got shape {arr.shape}")
    if arr.size == 0:
        return Frequencies(np.zeros(0), np.zeros(0), 0, 0)
    if arr.dtype.kind not in "iuf" or (arr.dtype.kind == "f" and not np.all(np.isfinite(arr) & (arr == np.round(arr)))):
        raise ValueError("class sizes must be integers")
    arr = arr.astype(np.int64)
    if arr.min() < 1:
        raise ValueError(f"class sizes must be >= 1, got {int(arr.min())}")
    j, f = np.unique(arr, return_counts=True)
    return Frequencies(j.astype(np.float64), f.astype(np.float64), int(arr.sum()), int(arr.size))


def _ladder(base: float, step: float, m: int) -> tuple[float, float, float, float, float, float]:
    """Sums over i = 1..m of log v, 1/v, i/v, 1/v^2, i/v^2, i^2/v^2 with v = base + i step (all v > 0)."""
    if m <= 0:
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    if step == 0.0:
        p1, p2 = m * (m + 1) / 2.0, m * (m + 1) * (2 * m + 1) / 6.0
        return m * math.log(base), m / base, p1 / base, m / base**2, p1 / base**2, p2 / base**2
    x = base / step
    if x <= _DIRECT_RATIO * (m + 1):
        a, b = x + 1.0, x + m + 1.0
        lg = float(gammaln(b) - gammaln(a))
        d1 = float(digamma(b) - digamma(a))                    # sum 1/(x + i)
        d2 = float(polygamma(1, a) - polygamma(1, b))          # sum 1/(x + i)^2
        s2 = step * step
        return (m * math.log(step) + lg, d1 / step, (m - x * d1) / step, d2 / s2,
                (d1 - x * d2) / s2, (m - 2.0 * x * d1 + x * x * d2) / s2)
    i = np.arange(1, m + 1, dtype=np.float64)
    v = base + i * step
    r = 1.0 / v
    r2 = r * r
    return (float(np.sum(np.log(v))), float(np.sum(r)), float(np.sum(i * r)), float(np.sum(r2)),
            float(np.sum(i * r2)), float(np.sum(i * i * r2)))


def _check(theta: float, alpha: float) -> None:
    if not (0.0 <= alpha < 1.0):
        raise ValueError(f"alpha must be in [0, 1), got {alpha}")
    if not (math.isfinite(theta) and theta > -alpha):
        raise ValueError(f"theta must be finite and > -alpha = {-alpha}, got {theta}")


def _terms(theta: float, alpha: float, q: Frequencies, order: int):
    """log L without the constant (order 0), with its gradient (1) and Hessian (2) in (theta, alpha)."""
    kS0, kS1, kSi1, kS2, kSi2, kSii2 = _ladder(theta, alpha, q.k - 1)
    nS0, nS1, _, nS2, _, _ = _ladder(theta, 1.0, q.n - 1)
    big = q.j >= 2
    jj, ff = q.j[big], q.f[big]
    loglik = kS0 - nS0 + float(np.sum(ff * (gammaln(jj - alpha) - gammaln(1.0 - alpha))))
    if order == 0:
        return loglik, None, None
    g = np.array([kS1 - nS1, kSi1 - float(np.sum(ff * (digamma(jj - alpha) - digamma(1.0 - alpha))))])
    if order == 1:
        return loglik, g, None
    h_aa = -kSii2 + float(np.sum(ff * (polygamma(1, jj - alpha) - polygamma(1, 1.0 - alpha))))
    H = np.array([[nS2 - kS2, -kSi2], [-kSi2, h_aa]])
    return loglik, g, H


def log_likelihood(theta: float, alpha: float, sizes, constant: bool = True) -> float:
    """log P(f_1..f_n) of eq. 2.10 (``constant=False``: without the factor n!/prod f_j! j!^f_j)."""
    q = frequencies(sizes)
    if q.n == 0:
        raise ValueError("empty partition (n = 0)")
    _check(theta, alpha)
    loglik = _terms(theta, alpha, q, 0)[0]
    return loglik + q.log_constant if constant else loglik


def score(theta: float, alpha: float, sizes) -> np.ndarray:
    """Gradient of log L (eq. 2.10) in (theta, alpha)."""
    q = frequencies(sizes)
    if q.n == 0:
        raise ValueError("empty partition (n = 0)")
    _check(theta, alpha)
    return _terms(theta, alpha, q, 1)[1]


def hessian(theta: float, alpha: float, sizes) -> np.ndarray:
    """Hessian of log L (eq. 2.10) in (theta, alpha); minus it is the observed information."""
    q = frequencies(sizes)
    if q.n == 0:
        raise ValueError("empty partition (n = 0)")
    _check(theta, alpha)
    return _terms(theta, alpha, q, 2)[2]


# ---------------------------------------------------------------------------------------------- fit


@dataclass(frozen=True)
class PitmanFit:
    """MLE of (theta, alpha) of eq. 2.10 with standard errors from the observed information.

    ``boundary`` names a degenerate fit: "singletons" (every class of size 1: the likelihood rises to
    1 as alpha -> 1 or theta -> inf; reported as alpha = 1, theta = inf, and every population
    element is estimated unique: S1_hat = N, p_hat = 1) or "alpha=0" (the constrained maximum lies
    on alpha = 0, the Ewens model; standard errors then come from the full 2 x 2 information and
    are only indicative).
    """

    theta: float
    alpha: float
    loglik: float
    n: int
    k: int
    s1: int
    se_theta: float | None = None
    se_alpha: float | None = None
    cov: tuple[tuple[float, float], tuple[float, float]] | None = None
    method: str = "newton"
    iterations: int = 0
    boundary: str | None = None
    gradient: tuple[float, float] = field(default=(0.0, 0.0))

    def log_population_uniques(self, population: float) -> float:
        """log S1_hat (eq. 2.14)."""
        _check_population(population, self.n)
        if self.boundary == "singletons":
            return math.log(population)
        return _log_s1(self.theta, self.alpha, population)

    def population_uniques(self, population: float) -> float:
        """S1_hat = Gamma(theta + 1) / Gamma(theta + alpha) N^alpha (eq. 2.14)."""
        if self.boundary == "singletons":
            _check_population(population, self.n)
            return float(population)
        return math.exp(self.log_population_uniques(population))

    def p_hat(self, population: float) -> float:
        """Hoshino's p_hat = (S1_hat / s1)(n / N) (eq. 2.15); ValueError when s1 = 0."""
        if self.s1 == 0:
            raise ValueError("no sample uniques (s1 = 0): p_hat = S1_hat n / (s1 N) is undefined")
        return math.exp(self.log_population_uniques(population) - math.log(self.s1) + math.log(self.n)
                        - math.log(population))

    def disclosure_risk(self, swapped_uniques: int, population: float) -> float:
        """DR = 1 - (swapped sample uniques / s1) p_hat (eq. 2.16); DR = 1 when nothing is swapped."""
        return disclosure_risk(self, swapped_uniques, population)

    def as_dict(self, population: float | None = None) -> dict:
        """JSON-ready summary (``theta`` is None for the "singletons" boundary, where it is infinite)."""
        out = {
            "theta": self.theta if math.isfinite(self.theta) else None, "alpha": self.alpha,
            "se_theta": self.se_theta, "se_alpha": self.se_alpha, "loglik": self.loglik,
            "n": self.n, "k": self.k, "sample_uniques": self.s1, "population": population,
            "population_uniques": None, "p_hat": None, "boundary": self.boundary,
            "method": self.method, "iterations": self.iterations,
        }
        if population is not None:
            out["population_uniques"] = self.population_uniques(population)
            out["p_hat"] = self.p_hat(population) if self.s1 else None
        return out


def _check_population(population: float, n: int) -> None:
    if not (isinstance(population, (int, float)) and math.isfinite(population) and population >= max(n, 1)):
        raise ValueError(f"population size N must be finite and >= n = {n}, got {population}")


def _log_s1(theta: float, alpha: float, population: float) -> float:
    return float(gammaln(theta + 1.0) - gammaln(theta + alpha)) + alpha * math.log(population)


def population_uniques(theta: float, alpha: float, population: float) -> float:
    """S1_hat = Gamma(theta + 1) / Gamma(theta + alpha) N^alpha (eq. 2.14), computed in logs."""
    _check(theta, alpha)
    _check_population(population, 1)
    return math.exp(_log_s1(theta, alpha, population))


def p_hat(theta: float, alpha: float, n: int, s1: int, population: float) -> float:
    """p_hat = (S1_hat / s1)(n / N) (eq. 2.15)."""
    _check(theta, alpha)
    _check_population(population, n)
    if s1 <= 0:
        raise ValueError("no sample uniques (s1 = 0): p_hat = S1_hat n / (s1 N) is undefined")
    return math.exp(_log_s1(theta, alpha, population) - math.log(s1) + math.log(n) - math.log(population))


def disclosure_risk(fit: PitmanFit, swapped_uniques: int, population: float) -> float:
    """DR = 1 - (#swapped sample uniques / s1) p_hat (eq. 2.16); needs 0 <= swapped <= s1.

    p_hat is an estimate and may exceed 1, so DR may fall below 0 for a full swap of all uniques.
    """
    if not (isinstance(swapped_uniques, (int, np.integer)) and 0 <= swapped_uniques <= fit.s1):
        raise ValueError(f"swapped sample uniques must be an integer in [0, s1 = {fit.s1}], got {swapped_uniques}")
    _check_population(population, fit.n)
    if swapped_uniques == 0:
        return 1.0
    return 1.0 - swapped_uniques / fit.s1 * fit.p_hat(population)


def _feasible(theta: float, alpha: float) -> bool:
    return 0.0 <= alpha <= ALPHA_MAX and math.isfinite(theta) and theta + alpha > 0.0


def _theta_given_alpha(q: Frequencies, alpha: float) -> float:
    """Root in theta of d log L / d theta at fixed alpha (the start of Newton)."""
    def g(t: float) -> float:
        return _terms(t, alpha, q, 1)[1][0]

    lo = -alpha + max(1e-12, 1e-9 * alpha) if alpha > 0 else 1e-12
    hi = max(1.0, float(q.k))
    while g(hi) > 0.0:
        hi *= 4.0
        if hi > 1e300:
            raise RuntimeError("no root of the theta score")
    if g(lo) <= 0.0:
        return lo
    return optimize.brentq(g, lo, hi, xtol=1e-12 * hi, rtol=1e-12, maxiter=500)


def _newton(q: Frequencies, theta: float, alpha: float, max_iter: int = 100):
    """Damped Newton-Raphson with the bound alpha >= 0 handled as an active set. None if it fails."""
    loglik, g, H = _terms(theta, alpha, q, 2)
    for it in range(1, max_iter + 1):
        free = np.array([True, True])
        while True:
            Hf, gf = -H[np.ix_(free, free)], g[free]
            try:
                chol = np.linalg.cholesky(Hf)
            except np.linalg.LinAlgError:
                return None                                    # not locally concave: fall back
            df = np.linalg.solve(chol.T, np.linalg.solve(chol, gf))
            if alpha == 0.0 and free[1] and df[1] <= 0.0:
                free[1] = False                                # on the bound and pushed out: fix alpha = 0
                continue
            break
        decrement = float(gf @ df)                             # predicted gain x 2
        if decrement < 1e-16 * max(1.0, abs(loglik)) or decrement < 1e-20:
            return theta, alpha, loglik, g, H, it
        d = np.zeros(2)
        d[free] = df
        t = 1.0
        if d[1] < 0.0 and alpha + d[1] < 0.0:
            t = alpha / -d[1]                                  # stop on the bound alpha = 0
        for _ in range(60):
            nt, na = theta + t * d[0], alpha + t * d[1]
            if t * d[1] == -alpha:
                na = 0.0
            if _feasible(nt, na):
                new = _terms(nt, na, q, 0)[0]
                if new >= loglik - 1e-12 * max(1.0, abs(loglik)) or decrement < 1e-10:
                    break
            t *= 0.5
        else:
            return None
        theta, alpha = nt, na
        loglik, g, H = _terms(theta, alpha, q, 2)
    return None


def _lbfgsb(q: Frequencies, theta: float, alpha: float):
    """Bounded quasi-Newton on (u, alpha), theta = exp(u) - alpha, alpha in [0, ALPHA_MAX]."""
    scale = 1.0 / max(1, q.n)

    def fun(z):
        u, a = float(z[0]), float(z[1])
        t = math.exp(u) - a
        if not _feasible(t, a):
            return 1e300, np.zeros(2)
        ll, g, _ = _terms(t, a, q, 1)
        return -ll * scale, -scale * np.array([g[0] * math.exp(u), g[1] - g[0]])

    z0 = np.array([math.log(theta + alpha), alpha])
    res = optimize.minimize(fun, z0, jac=True, method="L-BFGS-B", bounds=[(-50.0, 700.0), (0.0, ALPHA_MAX)],
                            options={"maxiter": 2000, "ftol": 1e-15, "gtol": 1e-12})
    u, a = float(res.x[0]), float(res.x[1])
    return math.exp(u) - a, a, int(res.nit)


def fit_pitman(sizes, method: str = "newton") -> PitmanFit:
    """MLE of (theta, alpha) of eq. 2.10 on class sizes, alpha in [0, 1), theta > -alpha.

    ``method="newton"``: Newton-Raphson (paper §2.4.3), falling back to L-BFGS-B (then a Newton
    polish) where the Hessian is not negative definite; ``"lbfgsb"`` forces the fallback path.
    Raises ValueError for n = 0 and for a single class of size >= 2 (the likelihood then rises to 1
    as theta -> -alpha for every alpha: nothing is identifiable and there are no sample uniques).
    """
    if method not in ("newton", "lbfgsb"):
        raise ValueError(f"method must be 'newton' or 'lbfgsb', got {method!r}")
    q = frequencies(sizes)
    if q.n == 0:
        raise ValueError("empty partition (n = 0): nothing to fit")
    if q.k == q.n:
        return PitmanFit(theta=math.inf, alpha=1.0, loglik=0.0, n=q.n, k=q.k, s1=q.s1, method="none",
                         boundary="singletons")
    if q.k == 1:
        raise ValueError(f"one class of size n = {q.n}: the likelihood rises to 1 as theta -> -alpha for every "
                         "alpha, so (theta, alpha) is not identifiable (and there are no sample uniques)")
    alpha0 = min(0.95, max(0.05, q.s1 / q.k))
    theta0 = _theta_given_alpha(q, alpha0)
    result, used = None, "newton"
    if method == "newton":
        result = _newton(q, theta0, alpha0)
    iterations = 0
    if result is None:
        theta1, alpha1, iterations = _lbfgsb(q, theta0, alpha0)
        result, used = _newton(q, theta1, alpha1), "lbfgsb+newton"
        if result is None:
            ll, g, H = _terms(theta1, alpha1, q, 2)
            result, used = (theta1, alpha1, ll, g, H, 0), "lbfgsb"
    theta, alpha, loglik, g, H, it = result
    se_t = se_a = cov = None
    try:
        np.linalg.cholesky(-H)
        c = np.linalg.inv(-H)
        se_t, se_a = math.sqrt(c[0, 0]), math.sqrt(c[1, 1])
        cov = ((float(c[0, 0]), float(c[0, 1])), (float(c[1, 0]), float(c[1, 1])))
    except np.linalg.LinAlgError:
        pass
    return PitmanFit(theta=float(theta), alpha=float(alpha), loglik=float(loglik + q.log_constant), n=q.n, k=q.k,
                     s1=q.s1, se_theta=se_t, se_alpha=se_a, cov=cov, method=used, iterations=iterations + it,
                     boundary="alpha=0" if alpha == 0.0 else None, gradient=(float(g[0]), float(g[1])))


# ----------------------------------------------------------------------------------------- simulate


def sample_partition(n: int, theta: float, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """Class sizes of n draws from the Chinese restaurant (Pitman-Yor) process, in order of creation.

    Customer m + 1 opens a new table w.p. (theta + k alpha)/(theta + m) and joins table j w.p.
    (n_j - alpha)/(theta + m); the weight n_j - alpha = (n_j - 1) + (1 - alpha) is drawn as a
    uniformly chosen earlier non-opening customer's table or a uniformly chosen table.
    """
    if not (isinstance(n, (int, np.integer)) and n >= 0):
        raise ValueError(f"n must be a non-negative integer, got {n}")
    _check(theta, alpha)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    u = rng.random(n)
    v = rng.random(n)
    sizes = np.zeros(n, dtype=np.int64)
    joined = np.zeros(n, dtype=np.int64)     # table of each customer who joined an existing table
    sizes[0], k, extra = 1, 1, 0
    for m in range(1, n):
        w = u[m] * (theta + m)
        if w < theta + k * alpha:
            sizes[k] = 1
            k += 1
            continue
        if w < theta + k * alpha + extra:
            table = joined[min(int(v[m] * extra), extra - 1)]
        else:
            table = min(int(v[m] * k), k - 1)
        sizes[table] += 1
        joined[extra] = table
        extra += 1
    return sizes[:k].copy()
