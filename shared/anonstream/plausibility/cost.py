"""The uniform t-PAT cost of paper 002 (§4.1, §4.6), base-2 logarithms, uniform local probability.

Per term, Lemma 1: H(w̄_i) = log2 |W(w̄_i)| = log2 volume. Per text, Lemma 2 (from the independence of eq. 4):
H(d̄) = Σ_i H(w̄_i) = log2 |D(d̄)|, so nothing is enumerated. t-plausible (Def. 2, Def. 4): H(d̄) ≥ log2 t.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

# Sums of logarithms are compared with this slack (log2 4 + log2 8 is 5 up to rounding).
EPS = 1e-9


@dataclass(frozen=True)
class Cost:
    """Eq. 1: ``total = global_ + local`` (the paper's C1 and C2)."""

    global_: float
    local: float

    @property
    def total(self) -> float:
        return self.global_ + self.local


def word_bits(volume: int) -> float:
    """Lemma 1 (eq. 2 under a uniform P_o): the entropy of a term shown as a node of this volume."""
    return math.log2(volume)


def cost(bits: Sequence[float], log_t: float, alpha: float = 0.5) -> Cost:
    """Eq. 1: C = α/m²·(H(d̄) − log t)² + (1−α)/m·Σ_i (H(w̄_i) − log t / m)², with H(d̄) = Σ_i H(w̄_i) (Lemma 2)."""
    m = len(bits)
    if m == 0:
        return Cost(0.0, 0.0)
    share = log_t / m
    return Cost(alpha / m**2 * (sum(bits) - log_t) ** 2,
                (1 - alpha) / m * sum((h - share) ** 2 for h in bits))


def plausible(bits: Sequence[float], log_t: float) -> bool:
    """Def. 2 / Def. 4: at least t plausible base texts, H(d̄) ≥ log t."""
    return sum(bits) >= log_t - EPS
