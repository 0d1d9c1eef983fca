"""The consistency rule between synthetic fields and the released text (issue 14 item 4; digest §8 P1).

Rule: **when the released text names one or more levels of a synthesized field, the record's synthetic
value is drawn from the model's predictive restricted to the named levels** (renormalized); when it names
none, the draw is unrestricted. A synthetic state that contradicts a state the text names would tell the
intruder that the field is synthetic and the text would still give the true value away, so a contradicting
draw protects nothing and exposes the synthesis. The price is stated plainly: a field the text names is
protected only as far as the text's mentions are (generalize or swap those mentions upstream, in the pii and
swap stages, before synthesis; the texts checked here are the released ones, after the swap). How many draws
the rule restricted is reported per field.

A level is *named* when one of its surface forms occurs in the text as a whole word, case-insensitively;
the surface forms of a level are the level itself plus the ones configured for it (e.g. ``TUR``: Turkey,
Turkish).
"""
from __future__ import annotations

import re
from typing import Mapping, Sequence

__all__ = ["allowed_levels", "named_levels"]


def _pattern(forms: Sequence[str]) -> re.Pattern[str]:
    alternatives = "|".join(sorted((re.escape(f) for f in forms if f), key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


def named_levels(text: str, patterns: Mapping[str, re.Pattern[str]]) -> set[str]:
    """The levels whose surface forms occur in ``text``."""
    return {level for level, pattern in patterns.items() if pattern.search(text)}


def allowed_levels(texts: Sequence[str], levels: Mapping[str, Sequence[str]],
                   surface_forms: Mapping[str, Mapping[str, Sequence[str]]] | None = None
                   ) -> dict[str, list[set[str] | None]]:
    """Per field, per record: the set of levels the text names (the draw is restricted to it), or None."""
    out: dict[str, list[set[str] | None]] = {}
    for field, field_levels in levels.items():
        forms = (surface_forms or {}).get(field, {})
        patterns = {str(level): _pattern([str(level), *forms.get(str(level), [])]) for level in field_levels}
        out[field] = [named_levels(text, patterns) or None for text in texts]
    return out
