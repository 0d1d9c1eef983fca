"""pMSE ratio of a synthetic release against the confidential one (paper 003 §4.1; Snoke et al. 2018).

Stack the n confidential and the n synthetic rows (t = 1 synthetic), fit the propensity logit t ~ features,
and take pMSE = (1/N) sum_i (p̂_i - c)^2 with N = 2n and c = n_syn / N. Under the null (both halves from
one distribution) E_0[pMSE] = (k - 1)(1 - c)^2 c / N, k the propensity model's parameters with the
intercept; R = pMSE / E_0[pMSE]. R ≈ 1 is the goal, R < 1 over-fits (the release reproduces the true
values), R > 1 under-fits. The text is the same in both halves; as in the paper its features enter through
a random projection to ``dim`` covariates, with main effects and every interaction between the fields'
dummies and the projected text (and between the fields), repeated over ``projections`` projections.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.random_projection import GaussianRandomProjection
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

__all__ = ["PMSE", "null_pmse", "pmse", "pmse_ratio"]


def null_pmse(k: int, n_total: int, c: float) -> float:
    """E_0[pMSE] = (k - 1)(1 - c)^2 c / N (Snoke et al. 2018, as cited by paper 003 §4.1)."""
    return (k - 1) * (1.0 - c) ** 2 * c / n_total


def pmse(p_hat: np.ndarray, c: float) -> float:
    return float(np.mean((np.asarray(p_hat) - c) ** 2))


@dataclass(frozen=True)
class PMSE:
    ratio: float              # mean over projections and copies
    ratio_low: float          # 2.5 % / 97.5 % of the per-projection means (the paper's empirical CI)
    ratio_high: float
    pmse: float
    null_expectation: float
    parameters: int           # k

    def as_dict(self) -> dict:
        return {"pmse_ratio": self.ratio, "pmse_ratio_ci": [self.ratio_low, self.ratio_high], "pmse": self.pmse,
                "pmse_null_expectation": self.null_expectation, "propensity_parameters": self.parameters}


def _dummies(values: Sequence[str], levels: Sequence[str]) -> np.ndarray:
    """Treatment coding: one column per level but the first."""
    v = np.asarray(values, dtype=object)
    return np.column_stack([(v == level).astype(np.float64) for level in levels[1:]]) if len(levels) > 1 \
        else np.empty((len(v), 0))


def _design(Z: np.ndarray, values: dict[str, Sequence[str]], levels: dict[str, Sequence[str]]) -> np.ndarray:
    blocks = [_dummies(values[f], levels[f]) for f in levels]
    cols = [Z] + blocks
    for D in blocks:                                                  # field x text
        cols += [D[:, [a]] * Z for a in range(D.shape[1])]
    for i in range(len(blocks)):                                      # field x field
        for j in range(i + 1, len(blocks)):
            cols += [blocks[i][:, [a]] * blocks[j] for a in range(blocks[i].shape[1])]
    return np.hstack(cols)


def pmse_ratio(text_features: sp.spmatrix | np.ndarray, real: dict[str, Sequence[str]],
               copies: Sequence[dict[str, Sequence[str]]], levels: dict[str, Sequence[str]] | None = None,
               projections: int = 20, dim: int = 10, seed: int = 0) -> PMSE:
    """The pMSE ratio averaged over ``copies`` (the M synthetic releases) and ``projections`` random
    projections of the text features (paper 003 §4.1 and Fig. 3)."""
    if not copies:
        raise ValueError("at least one synthetic copy")
    n = text_features.shape[0]
    levels = levels or {f: sorted(set(real[f])) for f in real}
    levels = {f: list(v) for f, v in levels.items()}
    per_projection, pmses, ks = [], [], []
    with threadpool_limits(1):          # many small fits: BLAS threads only contend
        for p in range(projections):
            per_projection.append(_one_projection(text_features, real, copies, levels, dim, seed + p, pmses, ks))
    low, high = np.percentile(per_projection, [2.5, 97.5])
    k = int(np.round(np.mean(ks)))
    return PMSE(float(np.mean(per_projection)), float(low), float(high), float(np.mean(pmses)),
                null_pmse(k, 2 * n, 0.5), k)


def _one_projection(text_features, real, copies, levels, dim: int, seed: int, pmses: list, ks: list) -> float:
    """Mean ratio over the copies under one random projection; appends each copy's pMSE and k."""
    n = text_features.shape[0]
    Z = GaussianRandomProjection(n_components=dim, random_state=seed).fit_transform(text_features)
    Z = np.asarray(Z.todense() if sp.issparse(Z) else Z)
    t = np.r_[np.zeros(n), np.ones(n)]
    c = 0.5                                      # partial synthesis: n synthetic rows beside n true ones
    real_design = _design(Z, real, levels)
    ratios = []
    for copy in copies:
        X = StandardScaler().fit_transform(np.vstack([real_design, _design(Z, copy, levels)]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = LogisticRegression(C=np.inf, max_iter=500).fit(X, t)
        k = X.shape[1] + 1
        value = pmse(model.predict_proba(X)[:, 1], c)
        ratios.append(value / null_pmse(k, 2 * n, c))
        pmses.append(value)
        ks.append(k)
    return float(np.mean(ratios))
