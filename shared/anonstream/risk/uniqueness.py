"""Population uniqueness from a sample's class sizes: the three models ARX offers and Dankar et al.'s rule.

Notation: a sample of n records from a population of N, sampling fraction pi = n / N; the sample's K
classes (distinct tuples), f_j of them of size j, f_1 the sample uniques. Each model estimates U, the number
of population uniques; U / N is the population's unique share and p_hat = (U / f_1)(n / N) the probability
that a sample unique is a population unique (paper 000 eq. 2.15, which defines it for Pitman's U).

* **Pitman** (Hoshino 2001; paper 000 eq. 2.10-2.14): ``pitman.fit_pitman``, U = Gamma(theta + 1) /
  Gamma(theta + alpha) N^alpha.
* **Zayatz** (1991): the population's class sizes are taken distributed as the sample's (f_j / K), and a
  class of size j shows once in the sample with the hypergeometric probability h(j) = j C(N - j, n - 1) / C(N, n):

      P(unique | sample unique) = f_1 h(1) / sum_j f_j h(j),      U = f_1 P(unique | sample unique) / pi.

  h(j) / h(1) = j prod_{i=1}^{j-1} (N - n + 1 - i) / (N - i) is evaluated with log1p, exact for any N (ARX
  clips N at 2^31 - 1).
* **SNB** (Chen & McNulty 1998): a population class has size F = 1 + X, X negative binomial (alpha, beta),
  P(X = x) = Gamma(alpha + x) / (Gamma(alpha) x!) beta^alpha (1 - beta)^x; each of its records is sampled with
  probability pi. With d = (1 - pi)(1 - beta) the expected sample classes of size 1 and 2 are

      E f_1 = K_N pi (beta / (1 - d))^alpha (1 + alpha d / (1 - d))
      E f_2 = K_N pi^2 alpha (1 - beta) beta^alpha (2 - (1 - alpha) d) / (2 (1 - d)^(alpha + 2))

  (moments solved for (alpha, beta)), K_N the population's classes by the Shlosser-type estimator ARX uses
  (Haas et al. 1995):  K_N = K + f_1 [sum_j j pi^2 (1 - pi^2)^(j-1) f_j / sum_j (1 - pi)^j ((1 + pi)^j - 1) f_j]
  [sum_j (1 - pi)^j f_j / sum_j j pi (1 - pi)^(j-1) f_j]^2,  and U = K_N P(F = 1) = K_N beta^alpha.
* **Dankar et al. (2012)**'s rule, as ARX applies it: pi <= 0.1: Pitman (Zayatz when Pitman has no valid
  estimate); pi > 0.1: the smaller of Zayatz and SNB (Zayatz when SNB has none).

No sample uniques: every model gives U = 0. A model without a valid estimate (no fit, a non-finite or zero U)
gives None.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize
from scipy.special import expit

from .pitman import Frequencies, fit_pitman, frequencies

__all__ = ["MODELS", "ModelEstimate", "PopulationUniqueness", "dankar_rule", "estimate_population_uniqueness",
           "shlosser_classes", "snb_expected_small_classes", "snb_fit", "snb_uniques", "zayatz_conditional",
           "zayatz_uniques"]

MODELS = ("pitman", "zayatz", "snb")
DANKAR_SAMPLING_FRACTION = 0.1      # Dankar et al. (2012): Pitman below, min(Zayatz, SNB) above


def _check(q: Frequencies, population: float) -> None:
    if q.n == 0:
        raise ValueError("empty sample (n = 0)")
    if not (math.isfinite(population) and population >= q.n):
        raise ValueError(f"population size N must be finite and >= n = {q.n}, got {population}")


def zayatz_conditional(sizes, population: float) -> float:
    """Zayatz's P(population unique | sample unique) = f_1 h(1) / sum_j f_j h(j) (module docstring)."""
    q = frequencies(sizes)
    _check(q, population)
    if q.s1 == 0:
        return 0.0
    n, N = float(q.n), float(population)
    top = int(q.j[-1])
    i = np.arange(1, top, dtype=np.float64)
    # log prod_{i=1}^{j-1} (N - n + 1 - i) / (N - i) for j = 1..top; a factor is 0 once N - n + 1 - i <= 0
    with np.errstate(divide="ignore"):
        steps = np.log1p(-(n - 1.0) / (N - i)) if top > 1 else np.zeros(0)
    log_ratio = np.concatenate([[0.0], np.cumsum(steps)])
    jj = q.j.astype(np.int64)
    weights = q.j * np.exp(log_ratio[jj - 1])             # h(j) / h(1)
    return float(q.s1 / np.sum(q.f * weights))


def zayatz_uniques(sizes, population: float) -> float:
    """Zayatz's U = f_1 P(unique | sample unique) / pi."""
    q = frequencies(sizes)
    return q.s1 * zayatz_conditional(q, population) * float(population) / q.n


def shlosser_classes(sizes, population: float) -> float:
    """The population's number of classes K_N (the Shlosser-type estimator of ARX's SNB, module docstring)."""
    q = frequencies(sizes)
    _check(q, population)
    pi = q.n / float(population)
    j, f = q.j, q.f
    log_keep = j * math.log1p(-pi) if pi < 1.0 else np.full_like(j, -np.inf)
    keep = np.exp(log_keep)                                 # (1 - pi)^j
    var1 = float(np.sum(j * pi * pi * np.exp((j - 1) * math.log1p(-pi * pi)) * f)) if pi < 1.0 else 0.0
    var2 = float(np.sum(keep * np.expm1(j * math.log1p(pi)) * f))
    var3 = float(np.sum(keep * f))
    var4 = float(np.sum(j * pi * np.exp((j - 1) * math.log1p(-pi)) * f)) if pi < 1.0 else 0.0
    if var2 == 0.0 or var4 == 0.0:
        return float(q.k)                                   # the whole population is sampled: K_N = K
    return q.k + q.s1 * (var1 / var2) * (var3 / var4) ** 2


def snb_expected_small_classes(alpha: float, beta: float, classes: float, pi: float) -> tuple[float, float]:
    """(E f_1, E f_2) of the SNB model with K_N = ``classes`` population classes (module docstring)."""
    d = (1.0 - pi) * (1.0 - beta)
    base = classes * (beta / (1.0 - d)) ** alpha
    e1 = base * pi * (1.0 + alpha * d / (1.0 - d))
    e2 = base * pi * pi * alpha * (1.0 - beta) * (2.0 - (1.0 - alpha) * d) / (2.0 * (1.0 - d) ** 2)
    return e1, e2


def _log_small_classes(alpha: float, beta: float, classes: float, pi: float) -> tuple[float, float]:
    """log E f_1, log E f_2 (the same formulas in logs: pi may be 1e-18)."""
    d = (1.0 - pi) * (1.0 - beta)
    one_minus_d = pi + beta - pi * beta
    base = math.log(classes) + alpha * (math.log(beta) - math.log(one_minus_d))
    l1 = base + math.log(pi) + math.log1p(alpha * d / one_minus_d)
    l2 = (base + 2.0 * math.log(pi) + math.log(alpha) + math.log1p(-beta) + math.log(2.0 - (1.0 - alpha) * d)
          - math.log(2.0) - 2.0 * math.log(one_minus_d))
    return l1, l2


@dataclass(frozen=True)
class SNBFit:
    alpha: float
    beta: float
    classes: float

    @property
    def uniques(self) -> float:
        """U = K_N beta^alpha."""
        return self.classes * self.beta ** self.alpha


def snb_fit(f1: float, f2: float, classes: float, pi: float, tolerance: float = 1e-8) -> SNBFit | None:
    """(alpha, beta) with E f_1 = f1 and E f_2 = f2 (in logs; alpha = e^a, beta = expit(b)); None when the
    moments have no solution (f_2 = 0, or the solver's residual above ``tolerance``)."""
    if f1 <= 0 or f2 <= 0 or classes <= 0 or not 0.0 < pi <= 1.0:
        return None
    target = np.array([math.log(f1), math.log(f2)])

    def residual(z: np.ndarray) -> np.ndarray:
        alpha, beta = math.exp(z[0]), float(expit(z[1]))
        if not 0.0 < beta < 1.0:
            return np.array([1e6, 1e6])
        return np.array(_log_small_classes(alpha, beta, classes, pi)) - target

    best = None
    for a0 in (0.0, -2.0, 2.0):
        for b0 in (0.0, -4.0, 4.0):
            try:
                res = optimize.least_squares(residual, np.array([a0, b0]), method="lm", xtol=1e-14, ftol=1e-14)
            except (ValueError, OverflowError, ZeroDivisionError):
                continue
            if best is None or res.cost < best.cost:
                best = res
    if best is None or not np.all(np.abs(best.fun) < tolerance):
        return None
    alpha, beta = math.exp(best.x[0]), float(expit(best.x[1]))
    if not (math.isfinite(alpha) and 0.0 < beta < 1.0):
        return None
    return SNBFit(alpha, beta, classes)


def snb_uniques(sizes, population: float) -> float | None:
    """SNB's U = K_N beta^alpha, or None when the moments have no solution."""
    q = frequencies(sizes)
    _check(q, population)
    if q.s1 == 0:
        return 0.0
    f2 = float(q.f[q.j == 2].sum())
    fit = snb_fit(float(q.s1), f2, shlosser_classes(q, population), q.n / float(population))
    return None if fit is None else fit.uniques


def _pitman_uniques(q: Frequencies, population: float) -> float | None:
    if q.s1 == 0:
        return 0.0
    try:
        return fit_pitman(q).population_uniques(population)
    except (ValueError, RuntimeError, ArithmeticError, np.linalg.LinAlgError):
        return None


def _valid(u: float | None) -> bool:
    return u is not None and math.isfinite(u) and u > 0.0


def dankar_rule(sampling_fraction: float, uniques: dict[str, float | None]) -> str | None:
    """The model Dankar et al. (2012)'s rule picks (ARX's order): pi <= 0.1: Pitman, else Zayatz; pi > 0.1:
    the smaller of Zayatz and SNB, Zayatz when SNB has no valid estimate. None: no model has one."""
    if sampling_fraction <= DANKAR_SAMPLING_FRACTION:
        order = ["pitman", "zayatz"]
    elif _valid(uniques.get("snb")) and _valid(uniques.get("zayatz")):
        order = ["zayatz" if uniques["zayatz"] < uniques["snb"] else "snb"]
    else:
        order = ["zayatz"]
    return next((m for m in order if _valid(uniques.get(m))), None)


@dataclass(frozen=True)
class ModelEstimate:
    """One model's population uniques U, their share U / N and p_hat = (U / f_1)(n / N)."""

    model: str
    uniques: float | None
    share: float | None
    p_hat: float | None

    def as_dict(self) -> dict[str, float | None]:
        return {"uniques": self.uniques, "share": self.share, "p_hat": self.p_hat}


@dataclass(frozen=True)
class PopulationUniqueness:
    n: int
    sample_uniques: int
    population: float
    sampling_fraction: float
    models: dict[str, ModelEstimate]
    dankar: str | None

    def as_dict(self) -> dict:
        return {"n": self.n, "sample_uniques": self.sample_uniques, "population": self.population,
                "sampling_fraction": self.sampling_fraction, "dankar_model": self.dankar,
                **{name: m.as_dict() for name, m in self.models.items()}}


def estimate_population_uniqueness(sizes, population: float) -> PopulationUniqueness:
    """Pitman, Zayatz and SNB estimates of the population uniques and the model Dankar's rule picks."""
    q = frequencies(sizes)
    _check(q, population)
    N = float(population)
    raw: dict[str, float | None] = {"pitman": _pitman_uniques(q, N)}
    raw["zayatz"] = zayatz_uniques(q, N) if q.s1 else 0.0
    raw["snb"] = snb_uniques(q, N)
    models = {}
    for name in MODELS:
        u = raw[name]
        u = u if u is not None and math.isfinite(u) else None
        p = None if u is None or q.s1 == 0 else u / q.s1 * (q.n / N)
        models[name] = ModelEstimate(name, u, None if u is None else u / N, p)
    pi = q.n / N
    return PopulationUniqueness(q.n, q.s1, N, pi, models, dankar_rule(pi, raw) if q.s1 else None)
