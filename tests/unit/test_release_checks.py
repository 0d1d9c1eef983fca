"""Checks of a sanitized text any domain can use (evaluation/checks.py): bands, places, phrases, order, over-masking."""
from __future__ import annotations

import pytest

from anonstream.evaluation.checks import (
    band_contains,
    changed_bands,
    check_release,
    common_threshold,
    compared_figures,
    countries_named,
    decades_in_date_phrases,
    neutral_noun_kind,
    neutral_noun_of_other_kind,
    place_verdict,
    widened_periods,
)
from anonstream.evaluation.release import LineDiff


@pytest.mark.parametrize("old, new, expected", [
    ("$0.017", "$0.01-0.02", True),
    ("$0.017", "$10-20", False),
    ("2.5 million", "1-5 million", True),
    ("2.5 million", "1-5", False),
    ("$12,400,000", "$10-20 million", True),
    ("35%", "30-40%", True),
    ("approximately 594,000", "500,000-1 million", True),  # the lower bound written out: not 500,000 million
    ("1,594,000", "500,000-1 million", False),
    ("45%", "30-40%", False),
    ("several", "10-20", None),  # no figure on the old side
    ("35%", "the share", None),  # no band on the new side
])
def test_band_contains_value_at_its_scale(old, new, expected):
    assert band_contains(old, new) is expected


def test_changed_bands_reads_the_unit_and_scale_around_the_diff():
    diff = LineDiff("approximately $0.017 of FFO per share", "$10-20 of the organisation per share")
    assert changed_bands(diff) == [("$0.017", "$10-20", False)]
    diff = LineDiff("revenue of $2.5 million in the quarter", "revenue of $1-5 million in the quarter")
    assert changed_bands(diff) == [("$2.5 million", "$1-5 million", True)]
    assert changed_bands(LineDiff("a 10-20% rise", "a 10-20% rise in Europe")) == []  # unchanged band: not judged


def test_compared_figures_lose_their_order_only_when_they_become_one_text():
    lost = compared_figures(LineDiff("margin increased to 16% from 12% last year",
                                     "margin increased to 10-20% from 10-20% last year"))
    assert lost == [("16% … 12%", "10-20% … 10-20%", True)]
    kept = compared_figures(LineDiff("margin increased to 16% from 32% last year",
                                     "margin increased to 10-20% from 30-40% last year"))
    assert [order_lost for *_, order_lost in kept] == [False]
    # two figures without a comparison word between them are not a comparison
    assert compared_figures(LineDiff("16% of staff and 12% of managers", "10-20% of staff and 10-20% of managers")) == []


def test_decade_inside_a_date_phrase():
    diff = LineDiff("in Q2 2021 and the first nine months of 2021", "in Q3 the 2020s and the first nine months of the 2020s")
    assert decades_in_date_phrases(diff) == ["Q3 the 2020s", "months of the 2020s"]
    assert decades_in_date_phrases(LineDiff("born in 1975", "born in the 1970s")) == []
    # a decade already in the original is no rewrite
    assert decades_in_date_phrases(LineDiff("months of the 1990s at Acme", "months of the 1990s at X")) == []


@pytest.mark.parametrize("old, new, expected", [
    ("Diluted EPS for 2016 was $2.10, up 13% over 2015.",
     "Diluted EPS for the 2010s was $2-5, up 10-20% over the 2010s.",
     [("2016", "the 2010s"), ("2015", "the 2010s")]),
    ("Net income for the second quarter of 2016 was $45 million.", "Net income for 2016 was $20-50 million.",
     [("second quarter of 2016", "2016")]),
    ("Diluted EPS for 2016 was $2.10, up 13% over 2015.",
     "Diluted EPS for a year in the mid-2010s was $2-5, up 10-20% over the year before.", []),
    ("Net income for the second quarter of 2016 was $45 million.", "Net income for the quarter of 2016 was $20-50 "
     "million.", []),
    ("He was sentenced for 1995 offences.", "He was sentenced for the 1990s offences.", []),  # no figure measured
    ("In 2019 he rode 3,000 km, for the 2016 Vuelta.", "In 2019 he rode 2,000-5,000 km, for the 2010s Vuelta.",
     []),  # an event's year
    # "in" also dates points in time: not judged
    ("In 2016 revenue was $5 million.", "In the 2010s revenue was $5-10 million.", []),
])
def test_a_measured_period_must_not_become_a_longer_one(old, new, expected):
    assert widened_periods(LineDiff(old, new)) == expected


def test_neutral_noun_of_another_kind():
    assert neutral_noun_kind("the organisation") == "org"
    assert neutral_noun_kind("a city") == "place"
    assert neutral_noun_kind("Paris") is None
    assert neutral_noun_of_other_kind("PRODUCT", "the organisation") is True
    assert neutral_noun_of_other_kind("EVENT", "the organisation") is True
    assert neutral_noun_of_other_kind("ORG", "the organisation") is False
    assert neutral_noun_of_other_kind("ORG", "the hospital") is False  # an institution that is also a building
    assert neutral_noun_of_other_kind("GPE", "the area") is False
    assert neutral_noun_of_other_kind(None, "the organisation") is None
    assert neutral_noun_of_other_kind("PRODUCT", "Acme") is None


@pytest.mark.parametrize("old, new, context, verdict", [
    ("Portland", "Oregon", (), "contained"),
    ("Portland", "the United States", (), "contained"),
    ("Gdańsk, Poland", "Europe", (), "contained"),
    ("Bochum", "the German prosecutor", (), "contained"),
    ("Western United States", "the United States", (), "contained"),
    ("Lincoln", "the United States", {"GB"}, "place_not_container"),  # the document's country decides
    ("Lincoln", "the United Kingdom", {"GB"}, "contained"),
    ("Western United States", "Singapore", (), "place_not_container"),
    ("Zakroczym", "Poland", (), "place_unconfirmed"),
    ("Warsaw", "Krakow", (), "place_to_place"),
    ("Idaho", "S-3", (), "place_to_non_place"),
    ("Paris", "the area", (), "neutral"),
    ("Paris", "[LOC]", (), None),
    ("Ankara", "İstanbul", (), "place_to_place"),  # the dotted capital I of Turkish is the same letter to GeoNames
    ("İzmir", "Turkey", (), "contained"),
    ("Florida", "Texas", (), "place_to_place"),  # the state, though towns in Cuba and Uruguay share its name
    ("Florida", "Texas", ("US",), "place_to_place"),
    ("Milan", "Italy", ("US",), "contained"),  # the best-known Milan, though Tennessee has one
    ("Milan", "Texas", ("US",), "place_not_container"),  # Milan, Tennessee is in Tennessee
])
def test_place_containment(old, new, context, verdict):
    assert place_verdict(old, new, context) == verdict


def test_countries_named():
    assert countries_named("The applicant lives in the United Kingdom and visited Poland.") == {"GB", "PL"}
    assert countries_named("Sales in the US and the UAE grew.") == {"US", "AE"}


def test_countries_named_reads_no_country_into_short_words():
    assert countries_named("So, In our IT budget, AS we said: NO.") == set()


def test_common_threshold_count_or_share():
    assert common_threshold(20, 716) == 20
    assert common_threshold(0.05, 716) == 36
    assert common_threshold(0.0001, 716) == 2
    assert common_threshold(1, 716) == 2


class _Reference:
    identities = 10

    def count(self, text):
        return {"covid": 9, "choice hotels": 1}.get(text.casefold(), 0)


def _tagger(lines):
    labels = {"COVID": "EVENT", "Idaho": "GPE", "Choice Hotels": "ORG"}
    return [[(line.index(k), line.index(k) + len(k), v) for k, v in labels.items() if k in line] for line in lines]


def test_check_release_counts_findings_per_check():
    pairs = [("d1", "We expect COVID to remain a challenge.\nSales in Idaho rose to 16% from 12%.\nChoice Hotels grew.",
              "We expect the organisation to remain a challenge.\nSales in S-3 rose to 10-20% from 10-20%.\n"
              "Acme Inns grew."),
             ("d2", "one\ntwo", "one two")]
    report = check_release(pairs, tagger=_tagger, reference=_Reference(), common_k=0.5)
    counts = report.counts()
    assert report.misaligned_documents == ["d2"]
    assert report.over_masking_threshold == 5
    assert counts["neutral_noun_of_other_kind"] == 1
    assert counts["place_to_non_place"] == 1
    assert counts["compared_figures_equal"] == 1
    assert counts["over_masked"] == 1  # COVID: 9 of 10 identities; Choice Hotels: 1
    assert counts["band_excludes_value"] == 0
    assert report.false_or_broken == 3
    assert "| over_masked | 1 |" in report.to_markdown()


def test_evaluate_release_cli_runs_the_checks_without_gold(tmp_path, monkeypatch, capsys):
    import json

    import anonstream.evaluation.release as release
    from anonstream.cli import build_parser

    monkeypatch.setattr(release, "spacy_tagger", lambda nlp=None, batch_size=64: _tagger)
    raw, out = tmp_path / "raw.jsonl", tmp_path / "out.jsonl"
    raw.write_text(json.dumps({"doc_id": "c1", "text": "Costs rose to $0.017 a share.\nIn Idaho."}) + "\n")
    out.write_text(json.dumps({"doc_id": "c1", "text": "Costs rose to $10-20 a share.\nIn S-3."}) + "\n")
    args = build_parser().parse_args(["evaluate-release", "--input", str(raw), "--sanitized", str(out), "--json"])
    assert args.func(args) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["findings"]["band_excludes_value"] == 1
    assert result["findings"]["place_to_non_place"] == 1
    assert result["false_or_broken"] == 2


def test_a_demonym_swapped_for_another_is_judged_as_no_place():
    def tagger(lines):
        return [[(line.index("American"), line.index("American") + 8, "NORP")] if "American" in line else []
                for line in lines]

    report = check_release([("d", "an American national", "a Kurdish national")], tagger=tagger)
    assert report.judged["places"] == 0 and report.false_or_broken == 0


def test_a_fiscal_period_the_tagger_reads_as_an_organisation_may_become_the_period():
    def tagger(lines):
        return [[(line.index("Q2"), line.index("Q2") + 2, "ORG")] if "Q2" in line else [] for line in lines]

    report = check_release([("d", "Sales in Q2 rose.", "Sales in the period rose.")], tagger=tagger)
    assert report.counts()["neutral_noun_of_other_kind"] == 0 and report.judged["neutral_nouns"] == 1


def test_a_range_released_as_one_band_is_no_lost_comparison():
    diff = LineDiff("We expect the dividend to grow 8% to 10% a year.", "We expect the dividend to grow 5-20% a year.")
    assert [lost for *_, lost in compared_figures(diff)] == []
    diff = LineDiff("Margins rose to 16% from 12%.", "Margins rose to 10-20% from 10-20%.")
    assert [lost for *_, lost in compared_figures(diff)] == [True]
