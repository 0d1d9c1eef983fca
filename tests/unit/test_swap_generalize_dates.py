"""Dates generalize as phrases (issue 26, item 2): a part of a month or of a year goes up as a whole, and a decade
only stands for a phrase of years ("Q3 the 2020s", "the first nine months of the 2020s" never again). The shapes are
those of the earnings calls (MAEC 2016) and the TAB judgments."""
from __future__ import annotations

import re

import pytest

from anonstream.swap.generalize import DateGeneralizer

STEP = DateGeneralizer("step")
# a decade inside a longer date phrase: what the old step wrote ("Q2 the 2010s", "summer of the 2010s")
_DECADE_INSIDE = re.compile(r"\S.*\bthe \d{3}0s|\bthe \d{3}0s\s+\S", re.I)


@pytest.mark.parametrize("value, step", [
    ("the first nine months of 2021", "2021"),
    ("Q2 2021", "2021"),
    ("Q2 of 2016", "2016"),
    ("the first quarter of 2016", "2016"),
    ("first-quarter 2016", "2016"),
    ("the same quarter of 2015", "2015"),
    ("the back half of 2016", "2016"),
    ("the balance of 2016", "2016"),
    ("H1 2016", "2016"),
    ("the fourth quarter of fiscal 2016", "fiscal 2016"),
    ("the end of 2016", "2016"),
    ("mid-2016", "2016"),
    ("summer of 2017", "2017"),  # was "summer of the 2010s"
    ("autumn and winter of 2007", "2007"),  # was "autumn and winter of the 2000s"
    ("the end of April 2001", "April 2001"),  # was "the end of 2001": false
    ("mid-April 2016", "April 2016"),  # was "mid-2016": false
    ("January 9 of 2016", "January 2016"),
    ("31 August 2006", "August 2006"),
    ("August 2006", "2006"),
    ("fiscal 2021", "fiscal 2021"),  # the year stays: "fiscal the 2020s" reads as nothing
    ("fiscal year 2021", "fiscal year 2021"),
    ("before 2016", "before 2016"),  # "before the 2010s" would be false
    ("in 2021", "in the 2020s"),
    ("2016", "the 2010s"),
    ("from 1994 to 1996", "from the 1990s"),
    ("2016 and 2017", "the 2010s"),
    ("late 1980s", "late 1980s"),
])
def test_step_generalizes_date_phrases_as_a_whole(value, step):
    out = STEP.generalize(value, "Date")
    assert out == step
    assert not _DECADE_INSIDE.search(out) or out.startswith(("in the", "from the")), out


@pytest.mark.parametrize("value, year", [
    ("the first nine months of 2021", "2021"),
    ("late March 2001", "2001"),
    ("in Q3 2006", "in 2006"),
    ("the third quarter of fiscal 2016", "fiscal 2016"),
])
def test_year_level_takes_parts_of_a_year_to_the_year(value, year):
    assert DateGeneralizer("year").generalize(value, "Date") == year


def test_quarter_step_keeps_its_hierarchy():
    quarter_step = DateGeneralizer("step", quarter=True)
    assert quarter_step.generalize("August 2006", "Date") == "the third quarter of 2006"
    assert quarter_step.generalize("the third quarter of 2006", "Date") == "2006"
    assert quarter_step.generalize("Q2 2021", "Date") == "2021"


def test_a_year_the_tagger_cut_from_its_period_stays_a_year_in_the_released_text():
    """Through the swap stage's rewrite: "our H2 [2018]" (the tagger took the year alone) must not read "our H2 the
    2010s"; a year on its own still goes to its decade."""
    from anonstream.swap import Release
    from anonstream.swap.pairing import Releaser
    from anonstream.swap.release import DEFAULT_RELEASE
    from anonstream.swap.testing import make_chunk
    from anonstream.swap.tuples import analyze

    release = Release.from_dict(DEFAULT_RELEASE)
    chunk = make_chunk("d1", 0, "Savings start in our H2 {DATETIME/DATE#date:2018}, after calendar "
                                "{DATETIME/DATE#date:2019}. Sales rose in {DATETIME/DATE#date:2014}.")
    released, _ = Releaser(release).finalize(chunk, analyze(chunk, release), fallback="generalize")
    assert released.text == "Savings start in our H2 2018, after calendar 2019. Sales rose in the 2010s."


@pytest.mark.parametrize("before, inside", [
    ("shipments in Q2 of ", True), ("Our first-half ", True), ("our outlook for full-year ", True),
    ("dated June, ", True), ("the end of ", True), ("our Q1 ", True),
    ("in ", False), ("since ", False)])
def test_a_year_the_tagger_split_from_its_period_stays_inside_the_phrase(before, inside):
    # generalized alone, "Q2 of [2016]" would read "Q2 of the 2010s"
    assert DateGeneralizer().part_of_phrase(before) is inside
