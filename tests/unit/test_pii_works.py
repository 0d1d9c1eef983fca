"""Titles of works where the text says they are works (shared/anonstream/pii/works.py)."""
from __future__ import annotations

import pytest

from anonstream.pii.works import WorkTitleRecognizer


def _titles(text: str) -> list[tuple[str, str]]:
    return sorted((text[d.start:d.end], d.rule) for d in WorkTitleRecognizer().analyze(text))


@pytest.mark.parametrize("text, titles", [
    # the year in parentheses
    ("She appeared in films such as Skinner (1993), Virtuosity (1995) and Excision (2012).",
     [("Excision", "year"), ("Skinner", "year"), ("Virtuosity", "year")]),
    ("the teen comedy Zack and Miri Make a Porno (2008)", [("Zack and Miri Make a Porno", "year")]),
    ("her debut studio album, 1000 Fires (1995) to positive reviews", [("1000 Fires", "year")]),
    ("records released on Epic Records, Chronicles (1997) and White Out (2000).",  # a list of titles with years
     [("Chronicles", "year"), ("White Out", "year")]),
    # the noun of the work's kind, after a determiner or a word that qualifies a work
    ("the theme song for the movie Stealth. He graduated", [("Stealth", "noun")]),
    ('with his song "Home" in 2009', [("Home", "noun")]),
    ("His fourth album Dedicated to Myself was released", [("Dedicated to Myself", "noun")]),
    ("an album entitled Rockets Over Sweden, which", [("Rockets Over Sweden", "noun")]),
    # a list after the plural of the kind
    ("directed films such as Hamlet 2, Barefoot, and Ideal Home.",
     [("Barefoot", "list"), ("Hamlet 2", "list"), ("Ideal Home", "list")]),
])
def test_titles_where_the_text_says_they_are_works(text, titles):
    assert _titles(text) == titles
    assert all(d.type == "MISC" and d.subtype == "WORK_OF_ART" and d.score > 0.85
               for d in WorkTitleRecognizer().analyze(text))


@pytest.mark.parametrize("text", [
    "we clearly believe that having a single J-code is not what matters",  # "single" is no work here
    "if we were to purchase a renewal book, I'm not quite sure",
    "our late-stage programs, Rova-T and ABT-414, as well",  # programmes of a drug maker are no works
    "his current roles as Chief Executive Officer of Hondros College and Chief Development Officer",
    "The applicant was born in 1951 and lives in Warsaw (Poland).",  # a parenthesis without a year
    "the film that he made in Paris",  # no capitalized title after the noun
    "He was Minister of Trade (1992), and later Mayor",  # an office with its year is no work
    "He is an Armenian chess Grandmaster (2008).",  # nor a title or an award alone with its year
    "He was nominated for an Academy Award for Best Special Effects at the 17th Academy Awards (1945).",
])
def test_no_title_without_the_form_of_one(text):
    assert _titles(text) == []


def test_a_numbered_title_is_a_work_not_a_product_model():
    from anonstream.pii.kinds import kind_of

    assert kind_of("MISC", "WORK_OF_ART", "Hamlet 2") == "work"
    assert kind_of("MISC", "PRODUCT", "A350") == "product"
