"""Shares of what the swap stage did, from its swap-log records (counts only, never values).

``summarize(log)`` gives the issue's done-report: share of chunks swapped, generalized, suppressed
and untouched, and the share of rare tuples (on J, before the swap, counted over all the log's
chunks: sample uniques for k = 2, the s_1 of paper 000 eq. 2.16) that left protected.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

from .pairing import ACTIONS


def summarize(log: Iterable[dict[str, Any]], k: int = 2) -> dict[str, Any]:
    records = list(log)
    n = len(records)
    actions = Counter(r["action"] for r in records)
    reasons = Counter(r["reason"] for r in records)
    digests = Counter(r["tuple_digest"] for r in records if r.get("tuple_digest"))
    rare = [r for r in records if r.get("tuple_digest") and digests[r["tuple_digest"]] < k]
    protected = sum(1 for r in rare if r["action"] != "untouched")
    with_values = sum(digests.values())
    return {
        "chunks": n,
        "chunks_with_swapped_category_values": with_values,
        "actions": {a: actions.get(a, 0) for a in ACTIONS},
        "shares": {a: round(actions.get(a, 0) / n, 4) if n else 0.0 for a in ACTIONS},
        "reasons": dict(sorted(reasons.items())),
        "rare_k": k,
        "rare_tuples": len(rare),
        "rare_protected": protected,
        "rare_protected_share": round(protected / len(rare), 4) if rare else 1.0,
        "changes_by_operator": dict(sorted(Counter(c["operator"] for r in records for c in r["changes"]).items())),
    }
