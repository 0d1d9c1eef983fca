"""Building an identifier policy from configuration: the rule policy, k-of-n voting (policy.py) or the learned
decision (learned.py). A module of its own above both, so neither imports the other."""
from __future__ import annotations

from typing import Any

from .learned import LearnedPolicy, LogisticModel
from .policy import IdentifierPolicy, RulePolicy, VotingPolicy


def make_policy(spec: dict[str, Any] | str | None) -> IdentifierPolicy:
    """Build a policy from config: ``"rules"``, ``"voting"`` or ``{"kind": ..., options...}``."""
    if spec is None or spec == "rules":
        return RulePolicy()
    if spec == "voting":
        return VotingPolicy()
    spec = dict(spec)
    kind = spec.pop("kind", "rules")
    if kind == "voting":
        return VotingPolicy(k=int(spec.get("k", 3)))
    if kind == "learned":
        model = LogisticModel.load(spec.get("model"))
        if "threshold" in spec:
            model.threshold = float(spec["threshold"])
        return LearnedPolicy(model)
    if "allow" in spec:
        spec["allow"] = frozenset(s.lower() for s in spec["allow"])
    if "country_no_mask_types" in spec:
        spec["country_no_mask_types"] = tuple(spec["country_no_mask_types"])
    return RulePolicy(**spec)
