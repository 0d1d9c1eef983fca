"""A person addressed by name at the end of a greeting or a thanks, on a line of its own ("Thanks, Rich", "Good
morning, Shannon", "Hi Steve"), or at the start of a line before a request ("Shannon, please open the call for
questions"): the way speakers of a transcript, a chat or a ticket hand over to each other.

The tagger reads many such names as something else ("Shannon" a facility, "Rich" nothing, then a capitalized phrase
generalized to "the rich"). In the first 1,000 MAEC earnings calls 409 lines have this form: in 378 the word is a
given name (Faker's lists), and of the 31 others 29 are names too (Ed, Sayeed, Tao) and 2 are "Operator" and "Dr".
So the word is a person when it is a given name, or neither an English word (WordNet: "Operator") nor a title
("Dr"). A request opens 49 lines of the same calls with a word and a comma ("X, please", "X, go ahead", "X, would
you"): 14 given names, 20 "Operator" and 15 other English words ("Also", "Finally"), which the same test tells apart.
"""
from __future__ import annotations

import re
from typing import Any

from . import wordnet
from .base import Detection, Recognizer
from .gazetteer import TITLES, first_names

_ADDRESSED = re.compile(r"(?m)^[ \t]*(?:Thanks|Thank you|Good morning|Good afternoon|Good evening|Hi|Hello|Hey|Morning|"
                        r"Afternoon|Welcome|Sure|Yes|Okay|OK|Great),?[ \t]+(?P<name>[A-Z][a-z]+)[ \t]*[.!?]?[ \t]*$")

_VOCATIVE = re.compile(r"(?m)^[ \t]*(?P<name>[A-Z][a-z]+),[ \t]+(?:please|go ahead|would you|could you|can you|"
                       r"will you|you may|if you could|if you would)\b")


class AddressedNameRecognizer(Recognizer):
    """See the module docstring; score 0.9, above the tagger's 0.85, so the person wins over its misreading."""

    name = "addressed"

    def analyze(self, text: str, doc: Any | None = None) -> list[Detection]:
        out = []
        for form, pattern in (("greeting", _ADDRESSED), ("request", _VOCATIVE)):
            for m in pattern.finditer(text):
                word = m.group("name")
                if word.lower() in first_names() or not (wordnet.is_common_word(word) or word in TITLES):
                    out.append(Detection(m.start("name"), m.end("name"), "PERSON", 0.9, self.name, form,
                                         subtype="PERSON"))
        return out
