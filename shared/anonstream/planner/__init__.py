"""planner: choose a release from candidates on the risk-utility frontier (paper 000 §2.3-2.5, §3.2, issue 10).

Pure core: ``candidates`` (the candidates file → releases), ``frontier`` (dominance, frontier, choice rules,
eq. 2.6-2.8). Shell: ``replay`` (ingest..cluster once, the swap stage per candidate; DR, DU, share changed,
attack accuracy), ``plan`` (outputs), ``plot`` (frontier.png), ``cli`` (``anonstream plan-release``).
"""
from __future__ import annotations

from .candidates import Candidate, CandidatesInvalid, load_candidates, parse_candidates
from .frontier import Choice, choose, choose_max_risk, choose_tradeoff, dominates, frontier_mask

__all__ = ["Candidate", "CandidatesInvalid", "Choice", "choose", "choose_max_risk", "choose_tradeoff", "dominates",
           "frontier_mask", "load_candidates", "parse_candidates"]
