"""Lists of codes and of people named by letters: every item is a mention of its own (issue 26 item 4)."""
from __future__ import annotations

import random

import pytest

from anonstream.pii import wordnet
from anonstream.pii.gazetteer import LetterNameRecognizer, TitleRecognizer
from anonstream.pii.patterns import CaseNumberRecognizer


def _covered(recognizer, text: str) -> set[int]:
    """Characters of ``text`` inside some detection of ``recognizer``."""
    return {i for d in recognizer.analyze(text) for i in range(d.start, d.end)}


def _numbers_covered(text: str, numbers: list[str]) -> list[bool]:
    covered = _covered(CaseNumberRecognizer(), text)
    out, pos = [], 0
    for n in numbers:
        start = text.index(n, pos)
        pos = start + len(n)
        out.append(all(i in covered for i in range(start, pos)))
    return out


def _application_numbers(rng: random.Random, k: int) -> list[str]:
    """Application numbers of the Court's shape, small ones (that read like dates) included."""
    return [f"{rng.choice([rng.randint(1, 12), rng.randint(100, 99999)])}/{rng.randint(0, 20):02d}" for _ in range(k)]


@pytest.mark.parametrize("seed", range(5))
def test_every_number_of_a_long_list_of_applications_is_a_code(seed):
    rng = random.Random(seed)
    numbers = _application_numbers(rng, 30)
    body = ""
    for i, n in enumerate(numbers):
        gap = "" if i == 0 else (" and " if i == len(numbers) - 1 else rng.choice([", ", ",\n", "; "]))
        body += gap + n
    text = f"The case originated in thirty applications (nos. {body}) lodged against the Republic of Turkey."
    assert all(_numbers_covered(text, numbers))


@pytest.mark.parametrize("template", [
    "in applications nos. {0} and {1} against Turkey",
    "applications No. {0}, {1} and {2} were joined",
    "applications nos {0} & {1}",
    "the applications (Nos. {0};\n{1}; {2}) were lodged",
    "applications no. {0}, {1} and {2} with the Court",  # the first carries "no.", the rest do not
])
def test_each_application_number_of_a_short_list_is_a_code(template):
    numbers = ["3/06", "12/05", "65900/01"]
    text = template.format(*numbers)
    used = [n for n in numbers if n in text]
    assert all(_numbers_covered(text, used))


def test_a_list_after_a_singular_no_holds_application_numbers_only():
    hits = [d for d in CaseNumberRecognizer().analyze("Law no. 5190 and 5191 of 2004, Article no. 5 and 6")]
    assert not any(d.rule == "no_list" for d in hits)
    assert not _covered(CaseNumberRecognizer(), "Protocols Nos. 1 and 11 and Articles nos. 5 and 6")


@pytest.mark.parametrize("text,codes", [
    ("the applicant owned plot no. 1234/5 in the village", ["1234/5"]),
    ("cadastral parcel 245 and land plot 1234 were expropriated", ["245", "1234"]),
    ("he bought plots 17 and 18, and plot number 134", ["17", "18", "134"]),
    ("Plots 5, 6 and 9 of the land register", ["5", "6", "9"]),
    ("the car, registration number ABC 123, was seized", ["ABC 123"]),
    ("a lorry with registration plate 34 AB 123 and a van with licence plate B-XY 123", ["34 AB 123", "B-XY 123"]),
    ("the registered keeper of the car, registration number T61 TBX, was asked", ["T61 TBX"]),
])
def test_plots_parcels_and_registration_marks_are_codes(text, codes):
    assert all(_numbers_covered(text, codes))


@pytest.mark.parametrize("text", [
    "the plot of the film was weak and a lot 5 times larger",
    "the registration number was not recorded by the police",
])
def test_words_around_land_and_vehicles_without_a_code_are_not_codes(text):
    assert not any(d.rule in ("land", "land_list", "plate") for d in CaseNumberRecognizer().analyze(text))


def _person_letters(text: str) -> list[str]:
    """Surfaces the letter-name and title recognizers type PERSON (WordNet needed, as in test_pii_wordnet)."""
    found = LetterNameRecognizer().analyze(text) + TitleRecognizer().analyze(text)
    return sorted({text[d.start:d.end] for d in found if d.type == "PERSON"})


@pytest.mark.parametrize("text,people", [
    ("The police questioned the co-accused A, B, H, N and R about the robbery.", ["A", "B", "H", "N", "R"]),
    ("The applicants X and Y complained under Article 5 § 1 (c).", ["X", "Y"]),
    ("the cases against [the applicant, N and A] had been heard", ["A", "N"]),
    ("the fees payable to A and B totalled DKK 573,311", ["A", "B"]),
    ("The witnesses K, L and M were not heard.", ["K", "L", "M"]),
    ("Mr A. and Ms B. were arrested on 3 March 2001.", ["Mr A.", "Ms B."]),
    ("Ms X and Mr Y testified; Mr A gave evidence too.", ["Mr A", "Mr Y", "Ms X"]),
])
def test_letters_naming_people_are_each_a_person(text, people):
    assert _person_letters(text) == people


@pytest.mark.parametrize("text", [
    "See Annexes A and B to the report.",
    "The patients had hepatitis B and C in 2001.",
    "The options A, B and C were considered.",
    "Parts A and B of the report cover the facts.",
    "a law firm G and N advised him",
    "Points (a) and (b) of Article 5 § 1 (c) apply; see Section B and Annex A.",
])
def test_letters_labelling_things_are_not_people(text):
    assert _person_letters(text) == []


@pytest.mark.parametrize("word,person", [
    ("co-accused", True), ("witnesses", True), ("applicants", True), ("individuals", True), ("counsel", True),
    ("firm", False), ("annexes", False), ("options", False), ("charges", False), ("types", False),
])
def test_a_person_noun_is_one_whose_most_frequent_sense_is_a_person(word, person):
    assert wordnet.is_person_noun(word) is person


def test_a_role_word_inside_a_longer_title_is_not_the_role():
    from anonstream.pii.gazetteer import RoleRecognizer

    text = "With me are Chief Executive Officer Jane Roe and a lawyer, who is an executive."
    found = [text[d.start:d.end] for d in RoleRecognizer().analyze(text)]
    assert "Executive" not in found and "executive" in found


def test_a_role_word_that_qualifies_the_noun_after_it_is_no_role():
    from anonstream.pii.gazetteer import RoleRecognizer

    text = "The song became the official anthem. He was an official in the ministry, and is a lawyer practising here."
    found = [(text[d.start:d.end], d.start) for d in RoleRecognizer().analyze(text)]
    assert ("official", text.index("official anthem")) not in found
    assert ("official", text.index("official in")) in found and ("lawyer", text.index("lawyer")) in found


def test_an_occupation_word_whose_most_frequent_sense_is_no_person_is_not_an_occupation_alone():
    from anonstream.pii.gazetteer import GazetteerRecognizer

    text = "We love that operating model. He was a pilot and a journalist."
    found = [text[d.start:d.end] for d in GazetteerRecognizer().analyze(text) if d.subtype == "OCCUPATION"]
    assert not any("model" in f for f in found) and "pilot" in found and "journalist" in found
