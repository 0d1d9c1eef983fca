"""find_occurrences agrees with the alternation regex it replaces (property test)."""
from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from anonstream.pii.occurrences import find_occurrences

ALPHABET = "ab -_.Éé1'’"


def _regex(text: str, forms: list[str], boundary: str) -> list[tuple[int, int, str]]:
    forms = [f for f in set(forms) if f]
    if not forms:
        return []
    b = re.escape(boundary)
    pattern = re.compile(rf"(?<![\w{b}])(?:" + "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
                         + rf")(?![\w{b}])")
    return [(m.start(), m.end(), m.group(0)) for m in pattern.finditer(text)]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=40), st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=5), max_size=5),
       st.sampled_from(["", "-"]))
def test_same_as_the_alternation_regex(text, forms, boundary):
    assert find_occurrences(text, forms, boundary) == _regex(text, forms, boundary)


def test_examples():
    text = "Polat met Cengiz Polat; Polat-Bey and Polatlı are other words."
    assert find_occurrences(text, ["Polat", "Cengiz Polat"]) == [
        (0, 5, "Polat"), (10, 22, "Cengiz Polat"), (24, 29, "Polat")]
    assert find_occurrences(text, ["Polat"], boundary="-") == [(0, 5, "Polat"), (17, 22, "Polat")]
