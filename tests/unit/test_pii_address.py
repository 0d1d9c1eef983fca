"""A person addressed by name after a greeting or before a request (shared/anonstream/pii/address.py)."""
from __future__ import annotations

import pytest

from anonstream.pii.address import AddressedNameRecognizer


@pytest.mark.parametrize("text, names", [
    ("Good morning, Shannon\nWe really don't see much change", ["Shannon"]),  # the tagger had read a facility
    ("we continued to grow\nThanks, Rich\nGood morning", ["Rich"]),  # a given name that is also a word
    ("Thank you, Sayeed.", ["Sayeed"]),  # no English word: a name
    ("Thank you, Operator", []),  # an English word and no given name
    ("Good morning, Dr", []),  # a title
    ("Thanks, Rich, and good luck", []),  # not the end of the line: no address alone
    ("We thank Steve for the work", []),  # no greeting at the line's start
    ("Thank you.\nShannon, please open the call for questions.", ["Shannon"]),  # a request to a named person
    ("Operator, please open the line.", []),  # an English word and no given name
    ("Also, please note the change.", []),
    ("Shannon, the new plant opens in May.", []),  # no request: a place may open a sentence so
])
def test_a_name_addressed_after_a_greeting(text, names):
    dets = AddressedNameRecognizer().analyze(text)
    assert [text[d.start:d.end] for d in dets] == names
    assert all(d.type == "PERSON" and d.score > 0.85 for d in dets)
