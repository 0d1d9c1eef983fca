"""Candidate releases of the planner (paper 000 §3.2.1: category subsets J x swap rates r).

File (YAML or JSON)::

    candidates:
      - {name: org-loc-r0.1, swap: [Organization, Location], swap_rate: 0.1}
      - {name: org-prod-r1, swap: [Organization, Product], swap_rate: 1.0}
    # optional:
    unlisted: U          # status of the default's S categories a candidate does not list (U or G; default U)
    base: release.yaml   # the release the candidates start from (default: the built-in default release)

Each candidate is the base release with the listed categories at status S (their generalizer as the base
has it), the base's other S categories at ``unlisted`` (U: left as written, the paper's "neither"; so J is
exactly the listed set), every other category as the base has it, and ``swap_rate`` r. An optional
``release:`` mapping per candidate overrides top-level release fields (``protect``, ``scope``, ``rare_k``,
``fallback``, ``superpopulation_size`` ...); the result must satisfy ``schemas/release.v1.json``.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..swap.release import CATEGORIES, DEFAULT_RELEASE, Release, ReleaseInvalid

__all__ = ["Candidate", "CandidatesInvalid", "load_candidates", "parse_candidates"]

UNLISTED_STATUSES = ("U", "G")
_CANDIDATE_KEYS = {"name", "swap", "swap_rate", "release"}
_FORBIDDEN_OVERRIDES = {"categories", "swap_rate", "name", "schema"}


class CandidatesInvalid(ValueError):
    """The candidates file is malformed (the message names the candidate and the field)."""


@dataclass(frozen=True)
class Candidate:
    name: str
    swap: tuple[str, ...]
    swap_rate: float
    release: Release = field(compare=False)

    def describe(self) -> dict[str, Any]:
        """What frontier.json says about the release: the candidate, the release version and statuses."""
        r = self.release
        return {"name": self.name, "swap": list(self.swap), "swap_rate": self.swap_rate, "version": r.version,
                "J": list(r.swapped), "statuses": {c: r.status(c) for c in CATEGORIES}, "scope": r.scope,
                "protect": r.protect, "rare_k": r.rare_k, "fallback": r.fallback,
                "superpopulation_size": r.superpopulation_size}


def _where(i: int, raw: Any) -> str:
    name = raw.get("name") if isinstance(raw, dict) else None
    return f"candidate {i + 1}" + (f" ({name!r})" if isinstance(name, str) else "")


def parse_candidates(obj: Any, base: dict[str, Any] | None = None) -> list[Candidate]:
    """Candidates from the parsed file content; ``base`` a release dict (default: the default release)."""
    if not isinstance(obj, dict) or "candidates" not in obj:
        raise CandidatesInvalid("the candidates file must be a mapping with a 'candidates' list")
    unknown_top = set(obj) - {"candidates", "unlisted", "base"}
    if unknown_top:
        raise CandidatesInvalid(f"unknown top-level keys {sorted(unknown_top)}; known: candidates, unlisted, base")
    unlisted = obj.get("unlisted", "U")
    if unlisted not in UNLISTED_STATUSES:
        raise CandidatesInvalid(f"unlisted must be one of {', '.join(UNLISTED_STATUSES)}, got {unlisted!r}")
    items = obj["candidates"]
    if not isinstance(items, list) or not items:
        raise CandidatesInvalid("'candidates' must be a non-empty list")
    base = copy.deepcopy(base if base is not None else DEFAULT_RELEASE)
    base_categories = base.get("categories") or {}
    out: list[Candidate] = []
    seen: set[str] = set()
    for i, raw in enumerate(items):
        where = _where(i, raw)
        if not isinstance(raw, dict):
            raise CandidatesInvalid(f"{where}: must be a mapping with name, swap, swap_rate")
        extra = set(raw) - _CANDIDATE_KEYS
        if extra:
            raise CandidatesInvalid(f"{where}: unknown keys {sorted(extra)}; known: {sorted(_CANDIDATE_KEYS)}")
        name = raw.get("name")
        if not isinstance(name, str) or not name.strip():
            raise CandidatesInvalid(f"{where}: 'name' must be a non-empty string")
        if name in seen:
            raise CandidatesInvalid(f"{where}: duplicate name")
        seen.add(name)
        swap = raw.get("swap")
        if isinstance(swap, str):
            swap = [swap]
        if not isinstance(swap, list) or not swap or not all(isinstance(c, str) for c in swap):
            raise CandidatesInvalid(f"{where}: 'swap' must be a non-empty list of categories (J != {{}})")
        unknown = [c for c in swap if c not in CATEGORIES]
        if unknown:
            raise CandidatesInvalid(f"{where}: unknown categories {unknown}; known: {', '.join(CATEGORIES)}")
        if len(set(swap)) != len(swap):
            raise CandidatesInvalid(f"{where}: a category is listed twice in 'swap'")
        rate = raw.get("swap_rate")
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0.0 <= float(rate) <= 1.0:
            raise CandidatesInvalid(f"{where}: 'swap_rate' must be a number in [0, 1]")
        overrides = raw.get("release") or {}
        if not isinstance(overrides, dict):
            raise CandidatesInvalid(f"{where}: 'release' must be a mapping of release fields")
        bad = _FORBIDDEN_OVERRIDES & set(overrides)
        if bad:
            raise CandidatesInvalid(f"{where}: 'release' may not set {sorted(bad)} (use swap / swap_rate / name)")
        release = {**copy.deepcopy(base), **copy.deepcopy(overrides), "name": name, "swap_rate": float(rate)}
        categories: dict[str, Any] = {}
        for category in CATEGORIES:
            rule = dict(base_categories.get(category) or {"status": "U"})
            if category in swap:
                rule["status"] = "S"
            elif rule.get("status") == "S":
                rule["status"] = unlisted
            categories[category] = rule
        release["categories"] = categories
        try:
            built = Release.from_dict(release)
        except ReleaseInvalid as exc:
            raise CandidatesInvalid(f"{where}: {exc}") from None
        ordered = tuple(c for c in CATEGORIES if c in swap)
        out.append(Candidate(name, ordered, float(rate), built))
    return out


def load_candidates(path: str | Path) -> list[Candidate]:
    """Read and parse a candidates file (YAML, or JSON by its .json suffix)."""
    import yaml

    path = Path(path)
    text = path.read_text(encoding="utf-8")
    try:
        obj = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise CandidatesInvalid(f"{path}: not valid {'JSON' if path.suffix == '.json' else 'YAML'} "
                                f"({type(exc).__name__})") from None
    base = None
    if isinstance(obj, dict) and obj.get("base"):
        base_path = Path(obj["base"])
        if not base_path.is_absolute():
            base_path = path.parent / base_path
        base_obj = yaml.safe_load(base_path.read_text(encoding="utf-8"))
        if not isinstance(base_obj, dict):
            raise CandidatesInvalid(f"base release {base_path} does not hold a mapping")
        base = base_obj
    return parse_candidates(obj, base)
