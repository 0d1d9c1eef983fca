"""The identities-per-value counts and the common-value decision (commonness.py)."""
from __future__ import annotations

import pytest

from anonstream.commonness import (CommonRule, FormCounts, InMemoryValueCounts, candidate_keys, common_entities,
                                   identity_of, normalize_form, release_common, value_key)
from anonstream.records import EntitySpan


def span(entity_id: str, text: str, type_: str = "ORG", kind: str | None = "company", ident: str = "QUASI",
         surrogate: str | None = None) -> EntitySpan:
    return EntitySpan(0, len(text), type_, ident, entity_id, text, surrogate=surrogate, kind=kind)


def test_normalized_forms_are_one_value():
    assert normalize_form("the  EBITDA") == normalize_form("EBITDA,") == "ebitda"
    assert normalize_form("Choice Hotels'") == "choice hotels"
    assert value_key("The Delta variant") != value_key("Delta")


def test_counts_are_distinct_identities_and_idempotent():
    counts = InMemoryValueCounts()
    for identity in ("ticker=A", "ticker=B", "ticker=A"):  # A twice: a redelivered record counts once
        counts.add(identity, [value_key("COVID")])
    counts.add("ticker=C", [value_key("Choice Hotels")])
    assert counts.counts([value_key("covid"), value_key("Choice Hotels"), "x"]) == {
        value_key("covid"): 2, value_key("Choice Hotels"): 1, "x": 0}
    assert counts.identities() == 3


def test_threshold_is_a_floor_and_a_share_of_identities_seen():
    rule = CommonRule(common_k=5, common_share=0.02)
    assert rule.threshold(10) == 5  # cold start: the floor
    assert rule.threshold(1000) == 20  # grown stream: the share
    with pytest.raises(ValueError):
        CommonRule().threshold(10)


def test_only_named_clear_non_direct_values_are_candidates():
    spans = [span("e1", "EBITDA"), span("e1", "the EBITDA"), span("e2", "Jane Roe", "PERSON", "person", "DIRECT",
                                                                   surrogate="[PERSON_1]"),
             span("e3", "2016", "DATETIME", "date"), span("e4", "Oregon", "LOC", "region")]
    assert candidate_keys(spans) == {"e1": {value_key("EBITDA")}, "e4": {value_key("Oregon")}}


def test_an_entity_is_common_only_when_each_of_its_forms_is():
    candidates = {"e1": {"a", "b"}, "e2": {"a"}}
    assert common_entities(candidates, {"a": 30, "b": 3}, 20) == {"e2": 30}
    assert common_entities(candidates, {"a": 30, "b": 25}, 20) == {"e1": 25, "e2": 30}


def test_release_common_counts_first_then_releases_common_quasi_values():
    counts = InMemoryValueCounts()
    for i in range(4):
        counts.add(f"ticker=T{i}", [value_key("GAAP")])
    rule = CommonRule(common_k=5)
    spans = [span("e1", "GAAP"), span("e2", "Choice Hotels"), span("e3", "Portland", "LOC", "city", "NO_MASK")]
    assert release_common(spans, "ticker=Z", counts, rule) == 1  # the fifth identity makes GAAP common
    assert (spans[0].identifier_type, spans[0].decision) == ("NO_MASK", "common(k=5)")
    assert (spans[1].identifier_type, spans[1].decision) == ("QUASI", None)
    assert spans[2].decision is None  # already NO_MASK by the policy: nothing to record
    assert counts.counts([value_key("Choice Hotels")]) == {value_key("Choice Hotels"): 1}


def test_identities_without_named_values_count_among_those_seen():
    counts = InMemoryValueCounts()
    release_common([span("e1", "2016", "DATETIME", "date")], "ticker=A", counts, CommonRule(common_k=2))
    assert counts.identities() == 1


def test_cold_start_is_safe_and_rule_off_still_counts():
    counts = InMemoryValueCounts()
    spans = [span("e1", "GAAP")]
    assert release_common(spans, "ticker=A", counts, CommonRule(common_k=2)) == 0
    assert spans[0].identifier_type == "QUASI"
    assert release_common([span("e1", "GAAP")], "ticker=B", counts, CommonRule()) == 0
    assert counts.counts([value_key("GAAP")])[value_key("GAAP")] == 2


def test_identity_is_the_named_field_else_the_document():
    assert identity_of({"ticker": "AAPL"}, "d1", "ticker") == "ticker=AAPL"
    assert identity_of({}, "d1", "ticker") == "doc=d1"
    assert identity_of({"ticker": "AAPL"}, "d1", None) == "doc=d1"


def test_saved_counts_load_without_double_counting(tmp_path):
    counts = InMemoryValueCounts()
    for t in ("A", "B", "C"):
        counts.add(f"ticker={t}", [value_key("EBITDA")])
    counts.add("ticker=A", [value_key("Choice Hotels")])
    path = tmp_path / "counts.json"
    assert counts.save(path, "ticker", min_count=2) == 1  # values of one identity are left out
    loaded = InMemoryValueCounts.load(path)
    loaded.add("ticker=A", [value_key("EBITDA")])  # a reference identity seen again on the stream
    loaded.add("ticker=D", [value_key("EBITDA")])
    assert loaded.counts([value_key("EBITDA")]) == {value_key("EBITDA"): 4}
    assert loaded.identities() == 4
    forms = FormCounts(loaded)
    assert forms.count("the EBITDA") == 4 and forms.count("x") == 0
