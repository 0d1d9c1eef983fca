"""Component families of the spherical mixture (paper 000, §2.2.2, eq. 2.1-2.2).

Both densities are taken w.r.t. the normalized uniform measure on S^{d-1} and depend on x only
through ||x - rho mu||^2 = 1 + rho^2 - 2 rho mu.x, so the log-densities of n points under K
components need one matrix product X M^T (n x d . d x K) and elementwise work on the n x K result.
"""
from __future__ import annotations

from enum import Enum

import numpy as np


class Family(str, Enum):
    """``pkb``: Poisson-kernel-based (eq. 2.1); ``scauchy``: spherical Cauchy (eq. 2.2)."""

    PKB = "pkb"
    SCAUCHY = "scauchy"


def sq_dist(cos: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """||x - rho mu||^2 = (1 - rho)^2 + 2 rho (1 - mu.x) in float64 from ``cos[i, k] = mu_k . x_i``.

    This form keeps its relative precision as rho -> 1 and mu.x -> 1 (1 + rho^2 - 2 rho mu.x
    cancels there); cosines are clipped to [-1, 1] against rounding.
    """
    q = np.empty(np.shape(cos), dtype=np.float64)
    np.clip(cos, -1.0, 1.0, out=q)
    np.subtract(1.0, q, out=q)
    q *= 2.0 * rho
    q += (1.0 - rho) ** 2
    return q


def log_density_from_sq_dist(
    q: np.ndarray, rho: np.ndarray, family: Family | str, d: int, out: np.ndarray | None = None
) -> np.ndarray:
    """log f from q = ||x - rho mu||^2 (eq. 2.1 / 2.2); log(1 - rho^2) as log1p(-rho) + log1p(rho)."""
    family = Family(family)
    rho = np.asarray(rho, dtype=np.float64)
    log_c = np.log1p(-rho) + np.log1p(rho)
    out = np.log(q, out=out)
    if family is Family.PKB:  # log(1 - rho^2) - (d/2) log||x - rho mu||^2
        out *= -0.5 * d
        out += log_c
    else:  # (d - 1) (log(1 - rho^2) - log||x - rho mu||^2)
        np.subtract(log_c, out, out=out)
        out *= d - 1
    return out


def log_density_from_cos(cos: np.ndarray, rho: np.ndarray, family: Family | str, d: int) -> np.ndarray:
    """(n, K) log f(x_i | mu_k, rho_k) (eq. 2.1 / 2.2), float64, from ``cos[i, k] = mu_k . x_i``."""
    rho = np.asarray(rho, dtype=np.float64)
    q = sq_dist(cos, rho)
    return log_density_from_sq_dist(q, rho, family, d, out=q)


def log_density(X: np.ndarray, mu: np.ndarray, rho: np.ndarray, family: Family | str) -> np.ndarray:
    """(n, K) matrix of log f(x_i | mu_k, rho_k) (paper 000, eq. 2.1 / 2.2), accumulated in float64.

    ``X`` (n x d, unit rows, any float dtype), ``mu`` (K x d or d, unit rows), ``rho`` (K or scalar).
    """
    X = np.asarray(X, dtype=np.float64)
    mu = np.atleast_2d(np.asarray(mu, dtype=np.float64))
    rho = np.atleast_1d(np.asarray(rho, dtype=np.float64))
    return log_density_from_cos(X @ mu.T, rho, family, X.shape[1])
