"""Names introduced by life dates, an encyclopaedic lead or a stated alias (shared/anonstream/pii/aliases.py)."""
from __future__ import annotations

import pytest

from anonstream.pii.aliases import LifeDatesRecognizer, stated_aliases
from anonstream.pii.base import Detection


def _names(text: str, dets: list[Detection]) -> list[str]:
    return [text[d.start:d.end] for d in dets]


@pytest.mark.parametrize("text, names", [
    ("Le Dake (simplified Chinese: 乐大克; born March 1960) is a former Chinese politician.", ["Le Dake"]),
    ("Johanna Hageman [Hargraves] (December 17, 1918 – February 10, 1984) was a player.", ["Johanna Hageman"]),
    ("Mary Forbes (born Ethel Louise Young, 1 January 1883 – 22 July 1974) was an actress.", ["Mary Forbes"]),
    ("Dathus or Datus, was elected Bishop of Ravenna.", ["Dathus", "Datus"]),
    ("The Istanbul State Security Court (Law no. 2845) held", []),  # a parenthesis without life dates
    ("Ankara is the capital (since 1923).", []),  # no copula lead with a comma, no life dates
])
def test_life_dates_and_lead(text, names):
    dets = LifeDatesRecognizer().analyze(text)
    assert _names(text, dets) == names
    assert all(d.type == "PERSON" and d.score > 0.85 for d in dets)


def _person(text: str, surface: str) -> Detection:
    start = text.index(surface)
    return Detection(start, start + len(surface), "PERSON", 0.85, "spacy_ner", "ner:PERSON")


@pytest.mark.parametrize("text, person, aliases", [
    ("Crystal Nicole, sometimes credited as Cristyle or Cri$tyle, is an American singer.", "Crystal Nicole",
     ["Cristyle", "Cri$tyle"]),
    ("Johanna Hageman [Hargraves] (December 17, 1918 – 1984)", "Johanna Hageman", ["Hargraves"]),
    ('John Smith, better known as "Smithy", played', "John Smith", ["Smithy"]),
    ("John Smith, known as the king of pop", "John Smith", []),  # a lower-case description is no alias
    ("John Smith was known as a careful judge", "John Smith", []),  # not right after the name
])
def test_stated_aliases(text, person, aliases):
    out = stated_aliases(text, [_person(text, person)])
    assert _names(text, out) == aliases
    assert all(d.type == "PERSON" and d.rule.startswith("alias:") for d in out)
