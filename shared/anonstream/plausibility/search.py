"""Choosing one generalization level per term (paper 002 §4): LUB search with the top-down greedy refinement
(Alg. 4 + Alg. 6), and the exact uniform t-PAT solver (Alg. 3, UEP) used as the oracle of the tests.

A problem is the volumes along each term's path (``volumes[i][j]``: the j-th ancestor of term i, non-decreasing in
j; ``volumes[i][0]`` is 1, the term itself, unless a floor cut the lower levels off) and log2 t. A ``Plan`` gives the level j_i of every term. When
even every term's root cannot reach t, every algorithm returns the roots, with ``satisfied`` False.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .cost import EPS, Cost, cost, plausible, word_bits


@dataclass(frozen=True)
class Plan:
    levels: tuple[int, ...]
    bits: tuple[float, ...]   # H(w̄_i) per term, Lemma 1
    cost: Cost                # eq. 1
    satisfied: bool           # H(d̄) ≥ log t (Def. 4's constraint)

    @property
    def total_bits(self) -> float:
        """H(d̄) = log2 |D(d̄)| (Lemma 2): the achieved t, in bits."""
        return sum(self.bits)


def _bits(volumes: Sequence[Sequence[int]]) -> list[list[float]]:
    return [[word_bits(v) for v in path] for path in volumes]


def _plan(bits: list[list[float]], levels: Sequence[int], log_t: float, alpha: float) -> Plan:
    chosen = tuple(bits[i][j] for i, j in enumerate(levels))
    return Plan(tuple(levels), chosen, cost(chosen, log_t, alpha), plausible(chosen, log_t))


def _roots(bits: list[list[float]], log_t: float, alpha: float) -> Plan | None:
    """All roots when even they fall short of t (the paper leaves this case open; no terms: the empty plan),
    else None."""
    if not bits:
        return Plan((), (), Cost(0.0, 0.0), plausible((), log_t))
    roots = [len(path) - 1 for path in bits]
    plan = _plan(bits, roots, log_t, alpha)
    return None if plan.satisfied else plan


def lub_search(volumes: Sequence[Sequence[int]], log_t: float, alpha: float = 0.5) -> Plan:
    """Alg. 4 steps 1-3: each term at the lowest ancestor with H(w̄_i) ≥ log t / m (the digest's reading of
    "H(w̄_i) = ⌈log t / m⌉", §3.3), or its root when none is that high; then, if that falls short of t (some
    roots were too low), the remaining bits are taken by raising the terms with the most room, one level at a
    time (cheapest cost first)."""
    bits = _bits(volumes)
    if (fallback := _roots(bits, log_t, alpha)) is not None:
        return fallback
    share = log_t / len(bits)
    levels = []
    for path in bits:
        lo, hi = 0, len(path) - 1
        while lo < hi:  # binary search on the monotone path
            mid = (lo + hi) // 2
            if path[mid] >= share - EPS:
                hi = mid
            else:
                lo = mid + 1
        levels.append(lo)
    plan = _plan(bits, levels, log_t, alpha)
    while not plan.satisfied:
        raised = [_plan(bits, levels[:i] + [levels[i] + 1] + levels[i + 1:], log_t, alpha)
                  for i in range(len(levels)) if levels[i] + 1 < len(bits[i])]
        plan = min(raised, key=lambda p: (not p.satisfied, p.cost.total))
        levels = list(plan.levels)
    return plan


def top_down_greedy(volumes: Sequence[Sequence[int]], log_t: float, alpha: float = 0.5,
                    start: Plan | None = None) -> Plan:
    """Alg. 6 (TDGS) from the LUB point (Alg. 4 step 8): repeatedly take the single one-level
    de-generalization that lowers C most while keeping H(d̄) ≥ log t; stop when none does. Ties: the first
    term."""
    bits = _bits(volumes)
    best = start or lub_search(volumes, log_t, alpha)
    if not best.satisfied or best.cost.total == 0:
        return best
    while True:
        current = best
        for i, j in enumerate(current.levels):
            if j == 0:
                continue
            candidate = _plan(bits, current.levels[:i] + (j - 1,) + current.levels[i + 1:], log_t, alpha)
            if candidate.satisfied and candidate.cost.total < best.cost.total:
                best = candidate
        if best is current:
            return best


def exact_search(volumes: Sequence[Sequence[int]], log_t: float, alpha: float = 0.5) -> Plan:
    """Alg. 3 (Uniform_ESearch_Prune): the minimum of eq. 1 over all level vectors with H(d̄) ≥ log t,
    depth-first over terms, levels ascending, pruned by Observation 1 (C2 of a prefix only grows), Observation 2
    (once a prefix reaches log t, C of the prefix only grows) and by prefixes that cannot reach log t even
    with every remaining root (the listing's i < m boundary read as "all m terms assigned", digest §6.3).
    Exponential: for small cases and tests."""
    bits = _bits(volumes)
    if (fallback := _roots(bits, log_t, alpha)) is not None:
        return fallback
    m = len(bits)
    share = log_t / m
    reachable = [0.0] * (m + 1)  # the most bits terms i.. can add
    for i in range(m - 1, -1, -1):
        reachable[i] = reachable[i + 1] + bits[i][-1]
    best_cost = float("inf")
    best_levels: tuple[int, ...] = ()
    levels: list[int] = []

    def visit(i: int, total: float, local: float) -> None:
        nonlocal best_cost, best_levels
        c2 = (1 - alpha) / m * local
        if c2 > best_cost:  # Observation 1
            return
        if total >= log_t - EPS and alpha / m**2 * (total - log_t) ** 2 + c2 > best_cost:  # Observation 2
            return
        if total + reachable[i] < log_t - EPS:
            return
        if i == m:
            c = alpha / m**2 * (total - log_t) ** 2 + c2
            if c < best_cost:
                best_cost, best_levels = c, tuple(levels)
            return
        for j, h in enumerate(bits[i]):
            levels.append(j)
            visit(i + 1, total + h, local + (h - share) ** 2)
            levels.pop()

    visit(0, 0.0, 0.0)
    return _plan(bits, best_levels, log_t, alpha)
