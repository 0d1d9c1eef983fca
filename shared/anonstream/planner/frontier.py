"""The risk-utility frontier and the choice of a release (paper 000 §2.3, eq. 2.6-2.8). Pure functions.

A point is a candidate's (DR, DU): disclosure risk (eq. 2.16, lower is better) and disclosure utility
(eq. 2.19, higher is better). Partial order (eq. 2.7): R1 ⪯ R2 iff DR(R2) <= DR(R1) and DU(R2) >= DU(R1);
R2 *dominates* R1 when moreover one of the two is strict. The frontier is the set of candidates no other
candidate dominates. A candidate whose DR or DU is undefined (None: no sample uniques, no changed chunk)
cannot be placed: it is never on the frontier and never chosen.

Choice rules:

* ``max_risk`` A (eq. 2.6): argmax DU subject to DR <= A; ties on DU go to the lower DR, then to the
  earlier candidate. This choice is never dominated (a dominating candidate would be feasible, with at
  least the same DU and, at equal DU, a lower DR).
* linear trade-off DR = c + a·DU (eq. 2.8, a > 0): the frontier point tangent to that line, i.e. the
  point on the lowest line of slope a that touches the candidates: argmin (DR - a·DU) (= the offset c of
  the line through it). Ties (offsets equal up to 1e-12 relative) go to the lower DR, then the higher DU,
  then the earlier candidate. Never dominated either: a dominating candidate has a smaller DR - a·DU, so
  it is among the ties or better, and wins the tie-break.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

__all__ = ["Choice", "choose", "choose_max_risk", "choose_tradeoff", "dominates", "frontier_mask", "placed"]

Point = tuple[float | None, float | None]  # (DR, DU)


def placed(point: Point) -> bool:
    """Both coordinates defined and finite."""
    dr, du = point
    return dr is not None and du is not None and math.isfinite(dr) and math.isfinite(du)


def dominates(a: Point, b: Point) -> bool:
    """``a`` dominates ``b`` (eq. 2.7, strict): DR(a) <= DR(b), DU(a) >= DU(b), one of them strictly."""
    if not (placed(a) and placed(b)):
        return False
    (dr_a, du_a), (dr_b, du_b) = a, b
    return dr_a <= dr_b and du_a >= du_b and (dr_a < dr_b or du_a > du_b)


def frontier_mask(points: Sequence[Point]) -> list[bool]:
    """Per point: placed and dominated by no other point (eq. 2.7's maximal elements)."""
    return [placed(p) and not any(dominates(q, p) for j, q in enumerate(points) if j != i)
            for i, p in enumerate(points)]


@dataclass(frozen=True)
class Choice:
    """The chosen candidate's index (None: nothing satisfies the rule), the rule and its parameter."""

    index: int | None
    rule: str
    parameter: float
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {"index": self.index, "rule": self.rule, "parameter": self.parameter, "reason": self.reason}


def choose_max_risk(points: Sequence[Point], max_risk: float, label: str = "DR") -> Choice:
    """Eq. 2.6: max DU subject to risk <= ``max_risk`` (``label`` names the risk measure in the reason)."""
    feasible = [i for i, p in enumerate(points) if placed(p) and p[0] <= max_risk]
    if not feasible:
        return Choice(None, "max_risk", float(max_risk), f"no candidate has {label} <= {max_risk}")
    best = min(feasible, key=lambda i: (-points[i][1], points[i][0], i))
    return Choice(best, "max_risk", float(max_risk), f"max DU subject to {label} <= A (eq. 2.6)")


def choose_tradeoff(points: Sequence[Point], slope: float, label: str = "DR") -> Choice:
    """Eq. 2.8: the frontier point tangent to DR = c + a·DU, a = ``slope`` > 0: argmin DR - a·DU."""
    if not (slope > 0 and math.isfinite(slope)):
        raise ValueError(f"the trade-off slope a must be a positive number, got {slope!r}")
    usable = [i for i, p in enumerate(points) if placed(p)]
    if not usable:
        return Choice(None, "tradeoff", float(slope), f"no candidate has both {label} and DU defined")
    offsets = {i: points[i][0] - slope * points[i][1] for i in usable}
    lowest = min(offsets.values())
    tol = 1e-12 * max(1.0, abs(lowest))  # offsets equal but for rounding are ties
    ties = [i for i in usable if offsets[i] <= lowest + tol]
    best = min(ties, key=lambda i: (points[i][0], -points[i][1], i))
    c = offsets[best]
    return Choice(best, "tradeoff", float(slope),
                  f"tangent to {label} = c + a*DU with a = {slope:g}, c = {c:.6g} (eq. 2.8)")


def choose(points: Sequence[Point], max_risk: float | None = None, slope: float = 1.0, label: str = "DR") -> Choice:
    """``max_risk`` given: eq. 2.6; otherwise the linear trade-off of slope ``slope`` (eq. 2.8)."""
    if max_risk is not None:
        return choose_max_risk(points, max_risk, label)
    return choose_tradeoff(points, slope, label)
