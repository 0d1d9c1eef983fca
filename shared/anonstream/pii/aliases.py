"""Person names that are marked by how the text introduces them rather than by the name itself.

* ``LifeDatesRecognizer`` — a name followed by a birth or life-dates parenthesis is a person's name, whatever
  the NER thinks ("Le Dake (simplified Chinese: …; born March 1960)", "Johanna Hageman [Hargraves] (December 17,
  1918 – February 10, 1984)"); so is the subject of a text that opens "Dathus or Datus, was …" (the
  encyclopaedic lead: names, a comma, a copula).
* ``stated_aliases`` — the other names a text gives for a detected person: "credited as Cristyle or Cri$tyle",
  "also known as …", and a bracketed alias right after the name ("Johanna Hageman [Hargraves]", the maiden or
  married name).
"""
from __future__ import annotations

import re
from typing import Any

from .base import Detection, Recognizer

_UPPER = r"[^\W\d_a-z]"  # a letter that is not ASCII lower case (upper case in any script, or CJK)
_NAME_WORD = rf"{_UPPER}[\w'’.‑-]*"
_NAME = rf"{_NAME_WORD}(?:[ \t]+{_NAME_WORD}){{0,3}}"
_BRACKET_ALIAS = r"(?:[ \t]*\[[^\]\n]{2,40}\])?"
_LIFE_DATES = re.compile(
    rf"(?<![\w'’.-])(?P<name>{_NAME}){_BRACKET_ALIAS}[ \t]*\("
    r"(?=(?:[^()\n]{0,120}?[;,][ \t]*)?(?:born|née|n\.|c\.[ \t]*\d|(?:[A-Z][a-z]+\.?[ \t]+)?(?:\d{1,2},?[ \t]+)?\d{3,4}"
    r"[ \t]*[–—-]))")
_LEAD = re.compile(rf"(?P<names>{_NAME}(?:[ \t]+or[ \t]+{_NAME})*),[ \t]+(?:was|is)[ \t]")
_NOT_NAMES = frozenset(("The", "A", "An", "In", "On", "At", "He", "She", "It", "They", "This", "That", "His", "Her"))


class LifeDatesRecognizer(Recognizer):
    """See the module docstring; score 0.9, above the NER's 0.85, so the span wins over an ORG misreading."""

    name = "life_dates"

    def analyze(self, text: str, doc: Any | None = None) -> list[Detection]:
        out = []
        for m in _LIFE_DATES.finditer(text):
            if m.group("name").split()[0] in _NOT_NAMES:
                continue
            out.append(Detection(m.start("name"), m.end("name"), "PERSON", 0.9, self.name, "life_dates",
                                 subtype="PERSON"))
        m = _LEAD.match(text)
        if m:
            for name in re.finditer(_NAME, m.group("names")):
                if name.group(0).split()[0] not in _NOT_NAMES:
                    out.append(Detection(m.start("names") + name.start(), m.start("names") + name.end(), "PERSON", 0.9, self.name, "lead_subject",
                                         subtype="PERSON"))
        return out


_ALIAS_INTRO = re.compile(
    r"^(?:,|[ \t]\()?[ \t]*(?:(?:also|sometimes|often|better|professionally|commonly|simply|later)[ \t]+)*"
    r"(?:known|credited|billed|called|nicknamed|styled|referred[ \t]+to)[ \t]+(?:as[ \t]+)?")
_ALIAS_VALUE = re.compile(r"[\"“]?(?P<alias>[^\W\d_a-z][^\s,;()\"”]*(?:[ \t]+[^\W\d_a-z][^\s,;()\"”]*){0,3})[\"”]?")
_ALIAS_SEP = re.compile(r"^(?:,[ \t]*|[ \t]+)(?:or|and)[ \t]+|^,[ \t]*(?=[\"“]?[^\W\d_a-z])")
_BRACKET = re.compile(r"^[ \t]*\[(?P<alias>[^\W\d_a-z][^\]\n]{1,38})\]")


def stated_aliases(text: str, dets: list[Detection]) -> list[Detection]:
    """PERSON mentions for the aliases stated right after a detected person (module docstring)."""
    out = []
    for d in dets:
        if d.type != "PERSON":
            continue
        tail = text[d.end : d.end + 160]
        m = _BRACKET.match(tail)
        if m:
            out.append(_alias(d.end + m.start("alias"), d.end + m.end("alias"), "bracket"))
            continue
        m = _ALIAS_INTRO.match(tail)
        if not m:
            continue
        pos = m.end()
        while True:
            v = _ALIAS_VALUE.match(tail, pos)
            if not v or v.group("alias") in _NOT_NAMES:
                break
            out.append(_alias(d.end + v.start("alias"), d.end + v.end("alias"), "stated"))
            sep = _ALIAS_SEP.match(tail[v.end():])
            if not sep:
                break
            pos = v.end() + sep.end()
    return out


def _alias(start: int, end: int, how: str) -> Detection:
    return Detection(start, end, "PERSON", 0.8, "alias", f"alias:{how}", subtype="PERSON")
