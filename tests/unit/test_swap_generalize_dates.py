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
    ("from 1994 to 1996", "in the 1990s"),
    ("2016 and 2017", "the 2010s"),
    ("Between 1997 and 1998", "In the 1990s"),  # not "Between the 1990s"
    ("between 1988 and 1993", "between the 1980s and the 1990s"),
    ("late 1980s", "late 1980s"),
    ("23 and 24 January 2008", "January 2008"),  # the listed days go up with the day the date names
    ("1, 9 and 12 September 2009", "September 2009"),
    ("between March and June 1994", "in 1994"),  # a range whose ends went up into one: "in" it
    ("from 3 to 5 May 2016", "in May 2016"),
    ("the age of 65", "the age of 60-70"),  # an age typed as a date goes up by decade, not left as it came
    ("age 19", "age 10-20"),
    ("aged 8 in 1988", "aged 0-10 in 1988"),  # only the age: the year is no age
])
def test_step_generalizes_date_phrases_as_a_whole(value, step):
    out = STEP.generalize(value, "Date")
    assert out == step
    assert not _DECADE_INSIDE.search(out) or out.lower().startswith(("in the", "from the", "between the")), out


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


def test_a_comma_and_after_one_date_joins_two_clauses_not_a_list():
    """"in 2015, and 2016 was better" is no list of two years: collapsed into one decade it had read "in the 2010s
    was better"; "in 2013, 2014, and 2015" is a list."""
    from anonstream.swap import Release
    from anonstream.swap.pairing import Releaser
    from anonstream.swap.release import DEFAULT_RELEASE
    from anonstream.swap.testing import make_chunk
    from anonstream.swap.tuples import analyze

    release = Release.from_dict(DEFAULT_RELEASE)
    chunk = make_chunk("d1", 0, "Sales grew in {DATETIME/DATE#date:2015}, and {DATETIME/DATE#date:2016} was better. "
                                "They fell in {DATETIME/DATE#date:2003}, {DATETIME/DATE#date:2004}, and "
                                "{DATETIME/DATE#date:2005}.")
    released, _ = Releaser(release).finalize(chunk, analyze(chunk, release), fallback="generalize")
    assert released.text == "Sales grew in the 2010s, and a year in the mid-2010s was better. They fell in the 2000s."


@pytest.mark.parametrize("before, inside", [
    ("shipments in Q2 of ", True), ("Our first-half ", True), ("our outlook for full-year ", True),
    ("dated June, ", True), ("the end of ", True), ("our Q1 ", True), ("the first 39 weeks of ", True), ("our year-end ", True),
    ("June 30, 2016 and ", True), ("in ", False), ("since ", False), ("in 2016 and ", False)])
def test_a_year_the_tagger_split_from_its_period_stays_inside_the_phrase(before, inside):
    # generalized alone, "Q2 of [2016]" would read "Q2 of the 2010s"
    assert DateGeneralizer().part_of_phrase(before) is inside


@pytest.mark.parametrize("value, step", [
    ("three years and nine months", "2-5 years"),  # the length of a sentence: agreed QUASI in TAB
    ("twelve years and six months", "10-20 years"),
    ("two years, eight months and twenty-five days", "2-5 years"),
    ("two and a half years", "2-5 years"),
    ("12 years and 6 months", "10-20 years"),
    ("fifteen days", "10-20 days"),
    ("25 years", "20-30 years"),
    ("three years", "several years"),  # a whole three to nine reads "several", as counts do
    ("for six months", "for several months"),
    ("one year’s", "1-2 years’"),  # "one year's imprisonment" keeps its possessive
    ("three years’ and nine months", "2-5 years"),  # the possessive of a middle part is not the phrase's
    ("two‑year", "2-5-year"),  # "the statutory two-year maximum"
    ("some three years", "several years"),  # the band says "about"
    ("nearly two years", "1-2 years"),  # just below two
    ("more than three and a half years", "more than 2 years"),
    ("less than six months", "less than 10 months"),
    ("the next 12 months", "the next 12 months"),  # counted from the text's present: no event
    ("several months", "several months"),
    ("the following day", "the following day"),
    ("five-year, 10-year", "several-year, 10-20-year"),  # a list of durations is not their sum
    ("fiscal 2016 year", "fiscal 2016 year"),  # a year named, none counted: not "fiscal 2,000-5,000 years"
])
def test_step_bands_a_duration_so_the_band_contains_it(value, step):
    assert STEP.generalize(value, "Date") == step


def test_a_time_limit_the_tagger_cut_from_within_stays():
    """"within [seven days]" and "over the next [12 months]" are time limits and spans counted from the text's own
    present; "detained for [seven days]" dates an event."""
    assert STEP.part_of_phrase("to be lodged within ", "seven days")
    assert STEP.part_of_phrase("over the next ", "12 months")
    assert not STEP.part_of_phrase("he was detained for ", "seven days")
    assert not STEP.part_of_phrase("lodged within ", "2016")


def test_a_day_in_a_list_of_dates_is_generalized_not_read_as_a_year_after_a_month():
    """"In February, [26 September], 5 November …": only a year reads as part of the period before it."""
    assert not STEP.part_of_phrase("In February, ", "26 September")
    assert STEP.part_of_phrase("In February, ", "2017")
    assert STEP.generalize("Three months later", "Date") == "Three months later"


@pytest.mark.parametrize("value, step", [
    ("1975, 1947, 1961", "the 1970s, the 1940s, the 1960s"),  # "born in 1975, 1947, 1961 … respectively"
    ("1961, 1965 and 1968", "the 1960s"),
    ("fiscal 2016, 2017", "fiscal 2016, 2017"),  # not years alone: the year stays
])
def test_a_list_of_years_goes_to_decades(value, step):
    assert STEP.generalize(value, "Date") == step


@pytest.mark.parametrize("before, value, expected", [
    ("the decline continued after ", "2016", "2010"),  # "after the 2010s" would start in 2020: false
    ("a year after ", "2010", "2000"),
    ("visibility beyond ", "2015", "2010"),  # "beyond the 2010s" would start in 2020
    ("expected to close before ", "2016", "2020"),
    ("the option runs until ", "2021", "the early 2020s"),  # "until 2030" would claim more: the decade's part
    ("serving as Chief of Staff until ", "2008", "the late 2000s"),
    ("complete by ", "2015", "the mid-2010s"),
    ("flexibility going through ", "2017", "2017"),  # "through the late 2010s" reads to 2019
    ("sales grew in ", "2016", "the 2010s"),
    ("our Q1 ", "2017", "2017"),
])
def test_a_year_bounding_a_time_moves_outwards_to_stay_true(before, value, expected):
    assert STEP.in_context(before, value, STEP.generalize(value, "Date")) == expected


@pytest.mark.parametrize("before, value, expected", [
    ("offences committed before ", "23 April 1999", "May 1999"),  # "before April 1999" left out 1-22 April
    ("prior to ", "1 May 2004", "May 2004"),  # before the 1st is before the month
    ("released after ", "23 April 1999", "March 1999"),
    ("released after ", "30 April 1999", "April 1999"),  # after its last day is after the month
    ("filed by ", "December 15, 2016", "January 2017"),
    ("arrested on ", "3 March 2003", "March 2003"),  # no bound: the month
    ("released on 30 May, ", "14 and 18 June 1996", "and June 1996"),  # the list's last month: "May, and June 1996"
    ("held on 3 May, ", "5 June and 7 July 1996", "June and July 1996"),  # it says "and" already
])
def test_a_day_bounding_a_time_moves_its_month_outwards_to_stay_true(before, value, expected):
    assert STEP.in_context(before, value, STEP.generalize(value, "Date")) == expected


@pytest.mark.parametrize("before, value, expected", [
    ("diluted share for ", "2016", "a year in the mid-2010s"),  # "for the 2010s" gave the figure to the decade
    ("a 13% increase over ", "2015", "a year in the mid-2010s"),
    ("heading into ", "2017", "a year in the late 2010s"),
    ("net income for ", "the second quarter 2016", "a quarter of 2016"),  # "for 2016" gave it to the year
    ("compared with ", "Q2 of fiscal 2015", "a quarter of fiscal 2015"),
    ("revenues for ", "the first nine months of 2016", "nine months of 2016"),
    ("EPS for ", "the first half of 2016", "a half-year of 2016"),
    ("compared with $40 million for the ", "second quarter of 2015", "quarter of 2015"),  # the text's own article
    ("the applicant was arrested ", "in 1995", "in the 1990s"),  # a point in time: its decade is true
    ("guidance for fiscal ", "2016", "2016"),  # inside the phrase "fiscal 2016": stays
    ("expected by ", "the end of 2016", "2016"),
])
def test_the_period_a_figure_is_measured_over_becomes_an_unnamed_period_of_its_length(before, value, expected):
    assert STEP.in_context(before, value, STEP.generalize(value, "Date")) == expected


@pytest.mark.parametrize("before, value, after, expected", [
    ("", "2016", " was a transformational year", "A year in the mid-2010s"),  # the subject of what is said
    ("we are expecting ", "2016", " to be better", "a year in the mid-2010s"),
    ("diluted share for ", "2016", " were $2.10", "a year in the mid-2010s"),
    ("named in the start list for the ", "2016", " Vuelta a España", "the 2010s"),  # qualifies the name after it
    ("a 25% increase versus ", "2015", " non-GAAP EPS of $1.31", "a mid-2010s year's"),
    ("a 19% increase over ", "2015", " revenue of $811 million", "a mid-2010s year's"),  # a year's revenue
    ("reserve development for ", "2016", " totaled $26.4 million", "a year in the mid-2010s"),  # a verb after it
    ("compared to $23.4 million ", "in 2015", ".", "in a year in the mid-2010s"),  # a figure's period after "in"
    ("he was paid 5,000 euros in ", "1995", ".", "a year in the mid-1990s"),
    ("let me reiterate our ", "2016", " guidance", "mid-2010s-year"),  # someone's guidance for one year
    ("In ", "2012", " we bought", "the 2010s"),  # the time a point falls in
    ("the market in ", "2016", " is strong", "the 2010s"),
])
def test_a_year_said_of_itself_or_of_someone_s_figure_is_an_unnamed_year(before, value, after, expected):
    """A year qualifying a thing's name ("the 2016 Vuelta") or dating a point ("in 2012") keeps its decade."""
    assert STEP.in_context(before, value, STEP.generalize(value, "Date"), after) == expected


@pytest.mark.parametrize("values, expected", [
    (["2000", "2007"], ["the early 2000s", "the late 2000s"]),  # "from 2000 to 2007": the order kept
    (["in 1973", "1974", "1977"], ["in the early 1970s", "the mid-1970s", "the late 1970s"]),
    (["2016", "2015"], ["the 2010s", "the 2010s"]),  # one part of the decade: no part parts them, the decade stays
    (["1938", "1945"], ["the 1930s", "the 1940s"]),  # decades part them already
    (["2013", "fiscal 2015"], ["the 2010s", "fiscal 2015"]),  # a year inside a phrase keeps its year
])
def test_years_of_one_decade_compared_in_a_sentence_read_their_part_of_it(values, expected):
    assert DateGeneralizer(level="step").generalize_together(values, "Date") == expected


@pytest.mark.parametrize("value, expected", [
    ("from 2000 to 2007", "from the early 2000s to the late 2000s"),  # one decade: its parts keep the range
    ("between 2001 and 2008", "between the early 2000s and the late 2000s"),
    ("from 2004 to 2006", "in the 2000s"),  # one part: the decade, as a range in one year does
    ("from 1999 to 2004", "from the 1990s to the 2000s"),
    ("2016 and 2017", "the 2010s"),  # a list of years is no range
    ("2008-2009", "the 2000s"),  # a hyphen joins two years
    ("during 2017 to 2019", "during the 2010s"),
    ("COVID-2019", "COVID-2019"),  # a hyphen before a year that follows no year: no date
])
def test_a_range_of_years_goes_up_as_a_whole(value, expected):
    assert DateGeneralizer(level="step").generalize(value, "Date") == expected


@pytest.mark.parametrize("value, expected", [
    ("1990/91 season", "the 1990s season"),  # a season of two years: its decade
    ("the 1996/97 season", "the 1990s season"),
    ("in 1921–22", "in the 1920s"),
    ("1919-20", "the 1910s/1920s"),  # across two decades: both
    ("2001 season", "the 2000s season"),  # a year that names a season
    ("fiscal 2016", "fiscal 2016"),  # a fiscal period keeps its year
])
def test_a_season_goes_up_to_its_decade(value, expected):
    assert DateGeneralizer(level="step").generalize(value, "Date") == expected


@pytest.mark.parametrize("value, expected", [
    ("12 to 18 months", "10-20 months"),  # "12 to 10-20 months" broke the range
    ("six or nine months", "5-10 months"),  # "six or several months"
    ("between two and three years", "2-5 years"),
    ("10-12 years", "10-20 years"),  # had stayed as written
])
def test_a_range_of_durations_is_one_band(value, expected):
    assert DateGeneralizer(level="step").generalize(value, "Date") == expected


@pytest.mark.parametrize("value, expected", [
    ("30 May, 14 and 18 June 1996", "May and June 1996"),  # not "May, June 1996"
    ("on 30 May, 14 and 18 June 1996", "on May and June 1996"),  # its preposition before it ("on" → "in": rewrite)
    ("24 January and 7 March 2002", "January and March 2002"),
    ("19 August, 30 September, 18 November 2008", "August, September, November 2008"),  # as the original wrote it
])
def test_a_list_of_days_reads_as_a_list_of_months(value, expected):
    assert STEP.generalize(value, "Date") == expected


@pytest.mark.parametrize("befores, values, afters, expected", [
    (["EPS for ", "a 13% increase over "], ["2016", "2015"], [" were $2.10", "."],
     ["a year in the mid-2010s", "the year before"]),  # the comparison stays, no year named
    (["we expect ", "better than "], ["2017", "2016"], [" to be", "."],
     ["a year in the late 2010s", "the year before"]),
    (["arrested ", "and released "], ["in 1995", "in 1996"], [" in Ankara", "."],
     ["in the 1990s", "in the 1990s"]),  # "in the year after" the 1990s would be false
    (["guidance for ", "a 19% increase over "], ["2016", "2015"], [" of $1 billion", " revenue"],
     ["a year in the mid-2010s", "the prior year's"]),
    (["development for ", "compared to $23.4 million "], ["2016", "in 2015"], [" totaled $26.4 million", "."],
     ["a year in the mid-2010s", "in the year before"]),
    (["guidance for ", "the absorption ", "versus "], ["2016", "in 2016", "2015"], [" was", " doubled", "."],
     ["a year in the mid-2010s", "in the 2010s", "a year in the mid-2010s"]),  # not "the 2010s versus the year before"
    (["guidance for ", "over "], ["2016", "2013"], [".", "."],
     ["a year in the mid-2010s", "a year in the early 2010s"]),  # not next to it: each alone
])
def test_a_measured_year_next_to_the_one_before_it_is_said_from_it(befores, values, afters, expected):
    outs = STEP.generalize_together(values, "Date")
    assert STEP.in_context_together(befores, values, outs, afters) == expected
