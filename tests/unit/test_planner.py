"""Release planner pure core: dominance (eq. 2.7), the frontier, the choice rules (eq. 2.6, 2.8), candidates."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonstream.planner.candidates import CandidatesInvalid, load_candidates, parse_candidates
from anonstream.planner.frontier import choose, choose_max_risk, choose_tradeoff, dominates, frontier_mask
from anonstream.swap.release import CATEGORIES, DEFAULT_RELEASE

# --- dominance and the frontier ---------------------------------------------------------------------


def test_dominates_is_strict_and_needs_both():
    assert dominates((0.2, 0.9), (0.3, 0.8))          # lower risk and higher utility
    assert dominates((0.2, 0.9), (0.2, 0.8))          # equal risk, higher utility
    assert dominates((0.1, 0.8), (0.2, 0.8))          # lower risk, equal utility
    assert not dominates((0.2, 0.8), (0.2, 0.8))      # equal points do not dominate each other
    assert not dominates((0.1, 0.7), (0.2, 0.8))      # trade-off: neither dominates
    assert not dominates((0.2, 0.8), (0.1, 0.7))
    assert not dominates((None, 0.9), (0.3, 0.1))     # undefined coordinates are never placed
    assert not dominates((0.0, 1.0), (0.3, None))


def test_frontier_mask():
    points = [(0.5, 0.9), (0.3, 0.7), (0.4, 0.6), (0.3, 0.7), (0.1, 0.2), (None, 0.99), (0.6, 0.9)]
    assert frontier_mask(points) == [True, True, False, True, True, False, False]


# --- choice rules ---------------------------------------------------------------------------------------

POINTS = [(0.9, 0.95), (0.5, 0.9), (0.3, 0.7), (0.1, 0.2), (0.5, 0.6)]


def test_max_risk_picks_max_utility_under_the_bound():
    assert choose_max_risk(POINTS, 0.5).index == 1
    assert choose_max_risk(POINTS, 0.35).index == 2
    assert choose_max_risk(POINTS, 1.0).index == 0
    none = choose_max_risk(POINTS, 0.05)
    assert none.index is None and "no candidate" in none.reason


def test_max_risk_ties_on_utility_go_to_lower_risk():
    assert choose_max_risk([(0.4, 0.8), (0.2, 0.8), (0.3, 0.5)], 0.5).index == 1


def test_tradeoff_is_argmin_of_the_line_offset():
    # c = DR - a DU: a = 1 -> [-0.05, -0.4, -0.4, -0.1, -0.1]: tie between 1 and 2, lower DR wins
    assert choose_tradeoff(POINTS, 1.0).index == 2
    # a small: risk dominates the choice -> the lowest DR
    assert choose_tradeoff(POINTS, 0.01).index == 3
    # a large: utility dominates -> the highest DU
    assert choose_tradeoff(POINTS, 100.0).index == 0
    with pytest.raises(ValueError):
        choose_tradeoff(POINTS, 0.0)
    assert choose_tradeoff([(None, 0.5)], 1.0).index is None


def test_choose_dispatches():
    assert choose(POINTS, max_risk=0.5).rule == "max_risk"
    assert choose(POINTS, slope=2.0).rule == "tradeoff"


coord = st.one_of(st.none(), st.floats(min_value=-1.0, max_value=2.0, allow_nan=False))
grid = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])  # many ties


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.one_of(coord, grid), st.one_of(coord, grid)), min_size=1, max_size=12),
       st.floats(min_value=1e-3, max_value=1e3), st.floats(min_value=-0.5, max_value=1.5))
def test_the_chosen_release_is_never_dominated(points, slope, max_risk):
    mask = frontier_mask(points)
    for choice in (choose_tradeoff(points, slope), choose_max_risk(points, max_risk)):
        if choice.index is None:
            continue
        assert mask[choice.index]
        assert not any(dominates(q, points[choice.index]) for q in points)


# --- candidates -------------------------------------------------------------------------------------------


def test_candidate_is_the_default_with_J_exactly_the_listed_set():
    [c] = parse_candidates({"candidates": [{"name": "org-loc-r0.1", "swap": ["Organization", "Location"],
                                            "swap_rate": 0.1}]})
    r = c.release
    assert r.swapped == ("Organization", "Location")
    assert r.swap_rate == 0.1 and r.name == "org-loc-r0.1"
    defaults = DEFAULT_RELEASE["categories"]
    for cat in CATEGORIES:
        if cat in ("Organization", "Location"):
            assert r.status(cat) == "S"
        elif defaults[cat]["status"] == "S":           # Product, Demographic: the default swaps them
            assert r.status(cat) == "U"
        else:
            assert r.status(cat) == defaults[cat]["status"]
    assert r.generalizer("Location") is not None
    assert c.describe()["J"] == ["Organization", "Location"]


def test_unlisted_status_and_overrides():
    [c] = parse_candidates({"unlisted": "G", "candidates": [
        {"name": "p", "swap": ["Person"], "swap_rate": 1, "release": {"protect": "rare", "rare_k": 3}}]})
    assert c.release.status("Organization") == "G" and c.release.status("Person") == "S"
    assert c.release.protect == "rare" and c.release.rare_k == 3


def test_candidates_have_distinct_versions():
    cs = parse_candidates({"candidates": [{"name": "a", "swap": ["Organization"], "swap_rate": 0.5},
                                          {"name": "b", "swap": ["Organization"], "swap_rate": 1.0}]})
    assert cs[0].release.version != cs[1].release.version


@pytest.mark.parametrize("obj, message", [
    ({"candidates": [{"name": "x", "swap": ["Organisation"], "swap_rate": 0.1}]}, "unknown categories ['Organisation']"),
    ({"candidates": [{"name": "x", "swap": [], "swap_rate": 0.1}]}, "non-empty list of categories"),
    ({"candidates": [{"name": "x", "swap": ["Person"], "swap_rate": 1.5}]}, "swap_rate"),
    ({"candidates": [{"name": "x", "swap": ["Person"], "swap_rate": True}]}, "swap_rate"),
    ({"candidates": [{"name": "x", "swap": ["Person"]}]}, "swap_rate"),
    ({"candidates": [{"swap": ["Person"], "swap_rate": 0.1}]}, "'name'"),
    ({"candidates": [{"name": "x", "swap": ["Person"], "swap_rate": 0.1},
                     {"name": "x", "swap": ["Date"], "swap_rate": 0.1}]}, "duplicate name"),
    ({"candidates": [{"name": "x", "swap": ["Person", "Person"], "swap_rate": 0.1}]}, "listed twice"),
    ({"candidates": [{"name": "x", "swap": ["Person"], "swap_rate": 0.1, "rate": 2}]}, "unknown keys"),
    ({"candidates": [{"name": "x", "swap": ["Person"], "swap_rate": 0.1,
                      "release": {"categories": {}}}]}, "may not set"),
    ({"candidates": [{"name": "x", "swap": ["Person"], "swap_rate": 0.1,
                      "release": {"protect": "sometimes"}}]}, "release.v1"),
    ({"candidates": []}, "non-empty list"),
    ({"releases": []}, "'candidates' list"),
    ({"candidates": [{"name": "x", "swap": ["Person"], "swap_rate": 0.1}], "unlisted": "S"}, "unlisted"),
])
def test_bad_candidates_are_rejected_clearly(obj, message):
    with pytest.raises(CandidatesInvalid) as err:
        parse_candidates(obj)
    assert message in str(err.value)


def test_unknown_category_error_names_the_candidate_and_the_known_ones():
    with pytest.raises(CandidatesInvalid) as err:
        parse_candidates({"candidates": [{"name": "ok", "swap": ["Date"], "swap_rate": 0.1},
                                         {"name": "bad", "swap": ["Date", "Company"], "swap_rate": 0.1}]})
    text = str(err.value)
    assert "candidate 2 ('bad')" in text and "'Company'" in text and "Organization" in text


def test_load_candidates_yaml_json_and_base(tmp_path):
    (tmp_path / "c.yaml").write_text("candidates:\n  - {name: org-loc-r0.1, swap: [Organization, Location], "
                                     "swap_rate: 0.1}\n")
    assert [c.name for c in load_candidates(tmp_path / "c.yaml")] == ["org-loc-r0.1"]
    (tmp_path / "c.json").write_text(json.dumps({"candidates": [{"name": "d", "swap": ["Date"], "swap_rate": 1}]}))
    assert load_candidates(tmp_path / "c.json")[0].release.swapped == ("Date",)
    (tmp_path / "base.yaml").write_text("schema: release.v1\nname: base\nswap_rate: 1.0\n"
                                        "categories: {Organization: {status: C}, Event: {status: F}}\n")
    (tmp_path / "b.yaml").write_text("base: base.yaml\ncandidates:\n  - {name: e, swap: [Person], swap_rate: 1}\n")
    [c] = load_candidates(tmp_path / "b.yaml")
    assert c.release.status("Organization") == "C" and c.release.status("Event") == "F"
    (tmp_path / "bad.yaml").write_text("candidates: [ {name: x\n")
    with pytest.raises(CandidatesInvalid):
        load_candidates(tmp_path / "bad.yaml")


# --- the risk measure, its noise, its printing (planner/measures.py) -------------------------------------

from anonstream.planner.measures import (Measured, binomial_se, du_note, risk_measure,  # noqa: E402
                                         separating_decimals, separation)


def _row(s1: int, swapped: int, p_hat: float, attack=None) -> dict:
    share = swapped / s1
    return {"risk": {"sample_uniques_before": s1, "swapped_uniques": swapped, "p_hat": p_hat,
                     "dr": 1 - share * p_hat, "uniques_kept_share": 1 - share}, "attack": attack}


def test_binomial_se_by_hand():
    assert binomial_se(50, 100) == pytest.approx((51 / 102 * 51 / 102 / 100) ** 0.5)
    assert binomial_se(0, 10) == pytest.approx((1 / 12 * 11 / 12 / 10) ** 0.5)      # a share of 0 has an error
    assert binomial_se(0, 0) is None


def test_risk_measures_of_a_row():
    row = _row(200, 50, 0.004, attack={"attackers": {
        "knn": {"accuracy_after": 0.6, "paired_chunks": 100}, "nb": {"accuracy_after": 0.7, "paired_chunks": 100}}})
    se = binomial_se(50, 200)
    assert risk_measure(row, "uniques") == Measured(0.75, se)
    dr = risk_measure(row, "dr")
    assert dr.value == pytest.approx(1 - 0.25 * 0.004) and dr.se == pytest.approx(0.004 * se)
    assert risk_measure(row, "attack") == Measured(0.7, binomial_se(70, 100))      # the strongest attacker
    assert risk_measure(_row(10, 1, 0.1), "attack") == Measured(None, None)
    with pytest.raises(ValueError):
        risk_measure(row, "entropy")


def test_separation_uses_two_standard_errors():
    a, b, c = Measured(0.50, 0.02), Measured(0.55, 0.02), Measured(0.70, 0.02)
    # |a - b| = 0.05 < 2 * 0.0283; |a - c| = 0.2 and |b - c| = 0.15 are beyond
    s = separation([a, b, c], chosen=0)
    assert s["pairs"] == 3 and s["pairs_separated"] == 2 and s["tied_with_chosen"] == [1]
    none = separation([a, b], chosen=1)
    assert not none["any_separated"] and none["tied_with_chosen"] == [0]
    assert separation([a, Measured(None, None)], chosen=0)["pairs"] == 0


def test_separating_decimals():
    assert separating_decimals([0.99871, 0.99912, 1.0]) == 4
    assert separating_decimals([0.9999871, 0.9999912]) == 6
    assert separating_decimals([0.5, 0.5, None]) == 4


def test_du_note_flags_values_above_one():
    assert du_note({"du": 0.97, "regime": "ratio"}) is None
    assert "eq. 2.17 > 0" in du_note({"du": 1.06, "regime": "ratio"})
    assert "negative" in du_note({"du": 1.06, "regime": "abs"})
    assert du_note(None) is None


def test_choice_names_the_measure():
    assert "uniques kept <= A" in choose_max_risk([(0.2, 0.9)], 0.5, label="uniques kept").reason
