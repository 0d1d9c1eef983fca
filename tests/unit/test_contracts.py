import pytest

from anonstream import contracts, topics
from anonstream.records import Chunk, EntitySpan


def test_every_topic_has_a_schema_and_every_schema_compiles():
    names = set(contracts.schema_names())
    for topic in topics.ALL:
        if topic is topics.SWAP_LOG and topic.schema not in names:
            continue  # written with the swapping core
        assert topic.schema in names
        contracts.validator(topic.schema)


def _chunk(**over) -> dict:
    chunk = Chunk("d1", 0, 1, "Hello Ann.", 0, 1, {"k": "v"}, lineage={"ingest": "1"})
    chunk.entities = [EntitySpan(6, 9, "PERSON", "DIRECT", "d1_e1", "Ann")]
    wire = chunk.to_wire()
    wire.update(over)
    return wire


def test_chunk_round_trips_and_validates_for_the_pii_topic():
    wire = _chunk()
    contracts.validate("chunk-pii.v1.json", wire)
    assert Chunk.from_wire(wire).to_wire() == wire


def test_topic_schema_requires_the_fields_its_stage_adds():
    without_entities = _embedded([0.1, 0.2, 0.3])
    del without_entities["entities"]
    with pytest.raises(contracts.RecordInvalid, match=r"required \(entities\)"):
        contracts.validate("chunk-embedded.v1.json", without_entities)
    with pytest.raises(contracts.RecordInvalid, match=r"cluster"):  # an embedded chunk leaves cluster with one
        contracts.validate("chunk-clustered.v1.json", _embedded([0.1, 0.2, 0.3]))


def test_a_chunk_may_pass_embed_and_cluster_without_a_vector_but_never_with_a_cluster_alone():
    """The embed stage embeds only chunks that need a vector (stages/embed.py needs_vector)."""
    contracts.validate("chunk-embedded.v1.json", _chunk())
    contracts.validate("chunk-clustered.v1.json", _chunk())
    without_vector = _clustered()
    del without_vector["embedding"]
    with pytest.raises(contracts.RecordInvalid):
        contracts.validate("chunk-clustered.v1.json", without_vector)


def test_errors_name_places_and_rules_never_values():
    secret = "Cengiz Polat lives at 5 Main Street"
    with pytest.raises(contracts.RecordInvalid) as caught:
        contracts.validate("document.v1.json", {"doc_id": secret, "text": 5, "extra": secret})
    message = str(caught.value)
    assert "Polat" not in message and "Main" not in message
    assert "$.text: type" in message and "$.doc_id: pattern" in message


def test_document_rejects_empty_text_and_unknown_fields():
    contracts.validate("document.v1.json", {"doc_id": "a", "text": "x", "metadata": {"a": 1}})
    for bad in ({"doc_id": "a", "text": ""}, {"doc_id": "a", "text": "x", "other": 1}, {"text": "x"}):
        with pytest.raises(contracts.RecordInvalid):
            contracts.validate("document.v1.json", bad)


def test_the_vector_rule_is_exactly_an_array_of_numbers():
    """contracts.validate skips walking float vectors on the strength of this rule: if the schema
    ever says more about the vector, the shortcut must be revisited."""
    schema = contracts.validator("chunk.v1.json").schema
    assert schema["$defs"]["embedding"]["properties"]["vector"] == {"type": "array", "items": {"type": "number"}}


def _embedded(vector, dim=3) -> dict:
    return _chunk(embedding={"model": "m", "dim": dim, "vector": vector})


def test_vectors_are_checked_for_type_length_and_finiteness():
    contracts.validate("chunk-embedded.v1.json", _embedded([0.1, 0.2, 0.3]))
    contracts.validate("chunk-embedded.v1.json", _embedded([0, 1, 0]))  # ints take the full schema walk
    cases = {"type": [0.1, "x", 0.3], "length != dim": [0.1, 0.2], "not finite": [0.1, float("nan"), 0.3]}
    for expected, vector in cases.items():
        with pytest.raises(contracts.RecordInvalid, match=expected):
            contracts.validate("chunk-embedded.v1.json", _embedded(vector))


# --- the fast validator decides as the reference does -----------------------------------------------------------

_VALUES = (None, True, False, 0, 1, -1, 1.0, 0.5, -2.5, "", "x", "d1", "PERSON", "DIRECT", [], [1], {}, {"a": 1})


def _clustered() -> dict:
    return _chunk(embedding={"model": "m", "dim": 3, "vector": [0.1, 0.2, 0.3]},
                  cluster={"model_version": 2, "component": 1, "posterior": 0.9, "log_density": -1.5,
                           "previous": {"model_version": 1, "component": 0}})


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, prefix + (i,))


def _mutated(record, path, action, value):
    import copy

    out = copy.deepcopy(record)
    if not path:
        return value if action == "set" else out
    parent = out
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if action == "set":
        parent[last] = value
    elif action == "delete" and isinstance(parent, dict):
        del parent[last]
    elif action == "add" and isinstance(parent[last], dict):
        parent[last]["unexpected"] = value
    return out


BASES = {"chunk.v1.json": _clustered, "chunk-pii.v1.json": _chunk, "chunk-embedded.v1.json": _clustered,
         "chunk-clustered.v1.json": _clustered,
         "document.v1.json": lambda: {"doc_id": "a", "text": "x", "metadata": {"a": 1}}}


def test_the_fast_validator_decides_as_the_reference_on_every_single_mutation():
    """Every path of a valid record of each schema set to each of a set of JSON values, deleted, or given an unknown
    key: fastjsonschema accepts exactly what jsonschema (Draft 2020-12, the reference) accepts."""
    import fastjsonschema

    checked = disagreements = rejected = 0
    for name, make in BASES.items():
        base = make()
        contracts.fast_validator(name)(base)  # the bases are valid
        for path in list(_paths(base)):
            for action, value in [("set", v) for v in _VALUES] + [("delete", None), ("add", 1)]:
                record = _mutated(base, path, action, value)
                try:
                    contracts.fast_validator(name)(record)
                    fast_ok = True
                except fastjsonschema.JsonSchemaException:
                    fast_ok = False
                reference_ok = not list(contracts.validator(name).iter_errors(record))
                checked += 1
                rejected += not reference_ok
                disagreements += fast_ok != reference_ok
                assert fast_ok == reference_ok, (name, path, action, value)
    assert checked > 2000 and rejected > 500 and disagreements == 0
