"""document_changes: the pii stage's surrogates and the swap stage's changes of sanitized chunks as one list of
changes per document (document offsets, one change per span, no old value)."""
from anonstream.document_changes import ANSI_MARKERS, changed_characters, chunk_changes, document_changes, highlight

RELEASE = {"schema": "release.v1", "name": "default", "version": "abc123"}


def _entity(start, end, type_, text, surrogate=None, identifier_type="QUASI", kind=None):
    return {"start": start, "end": end, "type": type_, "identifier_type": identifier_type, "entity_id": text,
            "text": text, "surrogate": surrogate, "kind": kind}


def test_a_pseudonym_and_a_swap_change_are_two_changes_with_their_entities_attributes():
    text = "[PERSON_1] moved to Ankara in 2003."
    chunk = {"text": text, "release": RELEASE,
             "entities": [_entity(0, 10, "PERSON", "[PERSON_1]", "[PERSON_1]", "DIRECT"),
                          _entity(20, 26, "LOC", "Ankara", "Ankara", kind="city"),
                          _entity(30, 34, "DATETIME", "2003")],  # left in clear
             "changes": [{"start": 20, "end": 26, "category": "Location", "operator": "swap", "new": "Ankara"}]}
    assert chunk_changes(chunk) == [
        {"start": 0, "end": 10, "entity_type": "PERSON", "kind": None, "identifier_type": "DIRECT",
         "operator": "pseudonym", "release_version": "abc123"},
        {"start": 20, "end": 26, "entity_type": "LOC", "kind": "city", "identifier_type": "QUASI",
         "operator": "swap", "release_version": "abc123"}]


def test_a_change_covering_several_mentions_and_its_leading_word_is_one_change():
    # "on 31 August 2006 and 5 June 1999" generalized as one list, "on" became "in"
    text = "It happened in 2000s."
    chunk = {"text": text, "release": RELEASE,
             "entities": [_entity(15, 20, "DATETIME", "2000s", "2000s")],
             "changes": [{"start": 12, "end": 20, "category": "Date", "operator": "generalize", "new": "in 2000s"}]}
    (change,) = chunk_changes(chunk)
    assert (change["start"], change["end"], change["operator"], change["entity_type"]) == (12, 20, "generalize",
                                                                                         "DATETIME")


def test_a_removed_value_is_an_empty_change_of_its_own():
    chunk = {"text": "Dear , thanks.", "entities": [_entity(5, 5, "PERSON", "", "", "DIRECT")], "changes": []}
    (change,) = chunk_changes(chunk)
    assert (change["start"], change["end"], change["release_version"]) == (5, 5, None)


def test_document_offsets_follow_the_sinks_join_and_no_change_holds_a_value():
    first = {"text": "[PERSON_1] came. ", "release": RELEASE,
             "entities": [_entity(0, 10, "PERSON", "[PERSON_1]", "[PERSON_1]", "DIRECT")], "changes": []}
    second = {"text": "He left Paris.\n", "release": RELEASE,
              "entities": [_entity(8, 13, "LOC", "Paris", "Paris")],
              "changes": [{"start": 8, "end": 13, "category": "Location", "operator": "swap", "new": "Paris"}]}
    changes = document_changes([first, second])
    text = first["text"] + second["text"]
    assert [text[c["start"]:c["end"]] for c in changes] == ["[PERSON_1]", "Paris"]
    assert all(set(c) == {"start", "end", "entity_type", "kind", "identifier_type", "operator", "release_version"}
               for c in changes)
    mask = changed_characters(len(text), changes)
    assert "".join(ch for ch, m in zip(text, mask) if m) == "[PERSON_1]Paris"
    assert highlight(text, changes) == "⟦[PERSON_1]⟧ came. He left ⟦Paris⟧.\n"
    assert highlight(text, changes, ANSI_MARKERS).count("\x1b[0m") == 2
