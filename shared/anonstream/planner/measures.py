"""The risk measure the planner chooses on, its noise, and how to print it (pure functions).

Measures (``--risk``), each lower is better:

* ``dr``: DR = 1 - (x / s1) p_hat (paper 000 eq. 2.16), x the swapped sample uniques of s1;
* ``uniques``: the share of sample-unique tuples left as they were, (s1 - x) / s1 (neither swapped nor
  generalized: a suppressed unique counts as kept, which errs on the side of risk);
* ``attack``: the attacker's accuracy on the released chunks (the strongest attacker when several ran).

**Noise.** Each measure is a share of m trials: x of s1 uniques (DR moves with it, scaled by p_hat), correct
guesses of the attacker's paired chunks. Its standard error is the binomial one, sqrt(p (1 - p) / m) with p
taken as (successes + 1) / (m + 2) so that a share of 0 or 1 still has an error (DR's: p_hat times the share's).
Two candidates differ beyond noise when their values are more than ``NOISE_Z`` = 2 standard errors of the
difference apart, |v_i - v_j| > 2 sqrt(se_i^2 + se_j^2) (about 95 % for independent shares; the candidates
share the corpus, so this errs on the side of "not separated").
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

__all__ = ["NOISE_Z", "RISK_MEASURES", "Measured", "binomial_se", "du_note", "risk_measure", "separating_decimals",
           "separation"]

RISK_MEASURES = ("dr", "uniques", "attack")
NOISE_Z = 2.0
LABELS = {"dr": "DR", "uniques": "uniques kept", "attack": "attack accuracy"}


@dataclass(frozen=True)
class Measured:
    """A candidate's value of the measure and its standard error (None: undefined)."""

    value: float | None
    se: float | None

    def as_dict(self) -> dict[str, float | None]:
        return {"value": self.value, "se": self.se}


def binomial_se(successes: int, trials: int) -> float | None:
    """sqrt(p (1 - p) / m) with p = (successes + 1) / (m + 2); None without trials."""
    if trials <= 0:
        return None
    p = (successes + 1.0) / (trials + 2.0)
    return math.sqrt(p * (1.0 - p) / trials)


def _strongest_attack(attack: dict[str, Any] | None) -> tuple[float, int] | None:
    rows = [(a["accuracy_after"], a["paired_chunks"]) for a in ((attack or {}).get("attackers") or {}).values()
            if a.get("accuracy_after") is not None and a.get("paired_chunks")]
    return max(rows) if rows else None


def risk_measure(row: dict[str, Any], measure: str) -> Measured:
    """The measure of one frontier.json row (``risk`` fields of ``stages.audit.risk_of``, ``attack``)."""
    if measure not in RISK_MEASURES:
        raise ValueError(f"unknown risk measure {measure!r}; known: {', '.join(RISK_MEASURES)}")
    if measure == "attack":
        best = _strongest_attack(row.get("attack"))
        if best is None:
            return Measured(None, None)
        accuracy, chunks = best
        return Measured(accuracy, binomial_se(round(accuracy * chunks), chunks))
    risk = row["risk"]
    s1, swapped = risk.get("sample_uniques_before") or 0, risk.get("swapped_uniques") or 0
    se = binomial_se(swapped, s1)
    if measure == "uniques":
        return Measured(risk.get("uniques_kept_share"), se)
    p_hat = risk.get("p_hat")
    return Measured(risk.get("dr"), None if se is None or p_hat is None else p_hat * se)


def separation(measured: Sequence[Measured], chosen: int | None) -> dict[str, Any]:
    """Which pairs of candidates differ beyond noise; ``tied_with_chosen``: the candidates the chosen one's
    measure does not separate from it (indices)."""
    defined = [i for i, m in enumerate(measured) if m.value is not None and m.se is not None]

    def apart(i: int, j: int) -> bool:
        a, b = measured[i], measured[j]
        return abs(a.value - b.value) > NOISE_Z * math.hypot(a.se, b.se)

    pairs = [(i, j) for k, i in enumerate(defined) for j in defined[k + 1:]]
    separated = [p for p in pairs if apart(*p)]
    tied = [] if chosen is None or chosen not in defined else [j for j in defined if j != chosen and not apart(chosen, j)]
    return {"z": NOISE_Z, "pairs": len(pairs), "pairs_separated": len(separated), "any_separated": bool(separated),
            "tied_with_chosen": tied}


def separating_decimals(values: Sequence[float | None], minimum: int = 4, maximum: int = 12) -> int:
    """The fewest decimals (at least ``minimum``) at which values that differ print differently."""
    finite = sorted({v for v in values if v is not None and math.isfinite(v)})
    for decimals in range(minimum, maximum + 1):
        if len({f"{v:.{decimals}f}" for v in finite}) == len(finite):
            return decimals
    return maximum


def du_note(utility: dict[str, Any] | None) -> str | None:
    """Why DU (eq. 2.19) is above 1, or None when it is not. The paper assumes sum log f(x | l, phi) > 0 and
    DU <= 1; the planner reports what it measures instead of clipping it."""
    if not utility or utility.get("du") is None or utility["du"] <= 1.0:
        return None
    if utility.get("regime") == "ratio":
        return ("DU > 1: the changed chunks are more likely under their components after the change than before "
                "(eq. 2.17 > 0), a case the paper rules out as extreme; the release lost no utility by this measure")
    return ("DU > 1: the log-densities before are negative (sum log f(x | l, phi) <= 0, outside the paper's "
            "assumption), so DU is 1 + (L_after - L_before) / |L_before|: the changed chunks gained likelihood")
