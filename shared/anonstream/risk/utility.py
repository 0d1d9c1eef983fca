"""Disclosure utility DU of a release (paper 000 §2.5, eq. 2.17-2.19).

Let x'_1..x'_m be the embeddings of the m = r·n chunks a release changed, *before* the change, x~'_1..x~'_m
the embeddings of the same chunks re-embedded *after* it, and l'_i the component of the mixture (fitted to
the pre-swap embeddings) that assigned chunk i. With the component log-densities (eq. 2.1 / 2.2, natural
log, w.r.t. the normalized uniform measure on the sphere, *without* the mixture weights pi: the likelihood
is conditional on the membership l')

    L_before = sum_i log f(x'_i  | phi_{l'_i})            L_after = sum_i log f(x~'_i | phi_{l'_i})

eq. 2.17 is L_after - L_before, and eq. 2.18 / 2.19 normalize it:

    DU = 1 + (L_after - L_before) / L_before = L_after / L_before.                     (2.18 = 2.19)

**Sign.** The paper assumes L_before > 0 (concentrated components in high dimension: densities above 1
near the mean direction), where DU < 1 exactly when the changed chunks became less likely. On the sphere a
log-density can as well be negative (a diffuse component, a chunk far from its component's mean). With
L_before < 0 the literal ratio L_after / L_before turns the measure around (less likely after → ratio
above 1). We therefore compute

    DU = 1 + (L_after - L_before) / |L_before|

which *is* eq. 2.19 when L_before > 0 and, when L_before < 0, keeps the meaning the paper gives DU (1 when
nothing moved, below 1 when the changed chunks lost likelihood under their components, by the relative
amount lost). The regime is reported (``UtilityTerms.regime``: ``"ratio"`` when L_before > 0, as in the
paper; ``"abs"`` when L_before < 0). L_before = 0 exactly (the sum of mixed-sign terms cancelling) has no
scale of its own; then the denominator is sum_i |log f(x'_i | phi_{l'_i})| (``"abs_terms"``), and if that
is 0 too (every row exactly at log-density 0) the number of rows (nats per row, ``"per_row"``).
DU is not clipped to [0, 1] (the paper "rules out" values above 1 as an extreme case; we report them).
The result is always finite: non-finite inputs raise ``ValueError``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..mixture.model import SphericalMixture

__all__ = ["UtilityTerms", "changed_log_likelihoods", "disclosure_utility", "du_from_sums", "utility_terms"]


@dataclass(frozen=True)
class UtilityTerms:
    """The pieces of DU: rows m, L_before, L_after (eq. 2.17's two sums), sum of |log f| before, DU, regime."""

    rows: int
    loglik_before: float
    loglik_after: float
    abs_terms_before: float
    du: float | None
    regime: str | None

    def as_dict(self) -> dict[str, object]:
        return {"rows": self.rows, "loglik_before": self.loglik_before, "loglik_after": self.loglik_after,
                "loglik_change": self.loglik_after - self.loglik_before, "du": self.du, "regime": self.regime}

    def __add__(self, other: "UtilityTerms") -> "UtilityTerms":
        """Sums of two groups of changed rows (e.g. rows assigned by two mixture versions)."""
        rows = self.rows + other.rows
        before = self.loglik_before + other.loglik_before
        after = self.loglik_after + other.loglik_after
        abs_terms = self.abs_terms_before + other.abs_terms_before
        du, regime = du_from_sums(after, before, rows, abs_terms)
        return UtilityTerms(rows, before, after, abs_terms, du, regime)


def du_from_sums(loglik_after: float, loglik_before: float, rows: int,
                 abs_terms_before: float | None = None) -> tuple[float | None, str | None]:
    """DU (eq. 2.18 / 2.19, sign handling in the module docstring) from the two sums over ``rows`` changed
    chunks; ``(None, None)`` when there are no rows."""
    if rows <= 0:
        return None, None
    if not (math.isfinite(loglik_after) and math.isfinite(loglik_before)):
        raise ValueError("log-likelihood sums must be finite")
    change = loglik_after - loglik_before
    if loglik_before > 0.0:
        return 1.0 + change / loglik_before, "ratio"          # = loglik_after / loglik_before (eq. 2.19)
    if loglik_before < 0.0:
        return 1.0 + change / -loglik_before, "abs"
    if abs_terms_before is not None and abs_terms_before > 0.0:
        return 1.0 + change / abs_terms_before, "abs_terms"
    return 1.0 + change / rows, "per_row"


def _rows(name: str, X: np.ndarray, dim: int) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1 and X.size == 0:
        X = X.reshape(0, dim)
    if X.ndim != 2 or X.shape[1] != dim:
        raise ValueError(f"{name}: expected an (m, {dim}) array, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} has NaN or inf entries")
    return X


def changed_log_likelihoods(mixture: SphericalMixture, before: np.ndarray, after: np.ndarray,
                            labels: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per changed row i: (log f(x'_i | phi_{l'_i}), log f(x~'_i | phi_{l'_i})), the terms of eq. 2.17.

    ``labels`` None: l' = MAP membership of the *before* rows under ``mixture`` (§2.5's l'_j)."""
    X = _rows("before", before, mixture.dim)
    Y = _rows("after", after, mixture.dim)
    if X.shape != Y.shape:
        raise ValueError(f"before {X.shape} and after {Y.shape} must have the same shape")
    m = X.shape[0]
    if m == 0:
        return np.zeros(0), np.zeros(0)
    if labels is None:
        labels = mixture.assign(X)[0]
    labels = np.asarray(labels)
    if labels.shape != (m,) or labels.dtype.kind not in "iu":
        raise ValueError(f"labels must be {m} integer components, got shape {labels.shape} dtype {labels.dtype}")
    if labels.min() < 0 or labels.max() >= mixture.k:
        raise ValueError(f"labels must lie in 0..{mixture.k - 1}")
    rows = np.arange(m)
    lb = mixture.log_component_densities(X)[rows, labels]
    la = mixture.log_component_densities(Y)[rows, labels]
    if not (np.all(np.isfinite(lb)) and np.all(np.isfinite(la))):
        raise ValueError("a component log-density is not finite (rho outside [0, 1)?)")
    return lb, la


def utility_terms(mixture: SphericalMixture, before: np.ndarray, after: np.ndarray,
                  labels: np.ndarray | None = None) -> UtilityTerms:
    """L_before, L_after and DU (eq. 2.17-2.19) of one group of changed chunks under one mixture."""
    lb, la = changed_log_likelihoods(mixture, before, after, labels)
    before_sum, after_sum, abs_terms = float(lb.sum()), float(la.sum()), float(np.abs(lb).sum())
    du, regime = du_from_sums(after_sum, before_sum, lb.size, abs_terms)
    return UtilityTerms(int(lb.size), before_sum, after_sum, abs_terms, du, regime)


def disclosure_utility(mixture: SphericalMixture, before: np.ndarray, after: np.ndarray,
                       labels: np.ndarray | None = None) -> float | None:
    """DU = log f(x~ | l, phi) / log f(x | l, phi) (paper 000 eq. 2.19), both sums over the changed chunks only.

    ``before`` / ``after``: (m, d) unit embeddings of the m changed chunks before / after the release;
    ``labels``: the component that assigned each row (None: ``mixture.assign(before)``). Returns None when
    m = 0, otherwise a finite float; with L_before < 0 the sign-safe form 1 + (L_after - L_before)/|L_before|
    (module docstring)."""
    return utility_terms(mixture, before, after, labels).du
