"""Wire contracts: JSON Schema validation of every topic's records (schemas/ at the repo root).

Validation errors are reported by location and rule only (``$.chunk_index: minimum``), never with
the offending value, so an error message is safe to log and to put on a dead-letter record.

Two validators of the same schemas: ``fastjsonschema`` compiles each schema (its references inlined) to Python
code and decides, much faster than ``jsonschema`` walks it (the walk was the largest cost of the cluster stage:
benchmarks/results/profile.md); a record it rejects is walked by ``jsonschema``
(the reference, Draft 2020-12) for the places and rules of the message, and only a record the reference rejects
too is invalid. tests/unit/test_contracts.py checks that the two decide alike.
"""
from __future__ import annotations

import importlib.resources
import math
from functools import lru_cache
from typing import Any

import fastjsonschema
import orjson
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

SCHEMA_PACKAGE = "anonstream.schemas"


class RecordInvalid(ValueError):
    """A record does not satisfy its topic's schema. The message names places and rules, not values."""


@lru_cache(maxsize=1)
def _registry() -> Registry:
    resources = []
    for entry in importlib.resources.files(SCHEMA_PACKAGE).iterdir():
        if entry.name.endswith(".json"):
            resource = Resource.from_contents(orjson.loads(entry.read_bytes()))
            resources.append((entry.name, resource))
            resources.append((resource.id(), resource))
    return Registry().with_resources(resources)


def schema_names() -> list[str]:
    return sorted(name for name in _registry() if not name.startswith("http"))


@lru_cache(maxsize=None)
def validator(schema_name: str) -> Draft202012Validator:
    schema = _registry()[schema_name].contents
    base = schema["$id"].rsplit("/", 1)[0]
    registry = _registry().with_resources(
        (f"{base}/{name}", _registry()[name]) for name in schema_names()
    )
    return Draft202012Validator(schema, registry=registry)


def _inlined(node: Any, root: dict) -> Any:
    """``node`` with every ``$ref`` replaced by what it points to: ``#/$defs/x`` in ``root``, or another schema
    file by name (itself inlined against its own root); ``$defs``, ``$id`` and ``$schema`` dropped. The
    schemas hold no recursive reference."""
    if isinstance(node, list):
        return [_inlined(item, root) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        if ref.startswith("#/$defs/"):
            target, target_root = root["$defs"][ref.removeprefix("#/$defs/")], root
        else:
            target_root = _registry()[ref].contents
            target = target_root
        rest = {k: v for k, v in node.items() if k != "$ref"}
        resolved = _inlined(target, target_root)
        return {"allOf": [resolved, _inlined(rest, root)]} if rest else resolved
    return {k: _inlined(v, root) for k, v in node.items() if k not in ("$defs", "$id", "$schema")}


@lru_cache(maxsize=None)
def fast_validator(schema_name: str):
    """The schema compiled by fastjsonschema (draft 7 semantics: the schemas use no keyword that differs from
    2020-12); raises ``fastjsonschema.JsonSchemaException`` on the first violation."""
    schema = _registry()[schema_name].contents
    return fastjsonschema.compile({**_inlined(schema, schema), "$schema": "http://json-schema.org/draft-07/schema#"})


def _where(error) -> str:
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = ",".join(p for p in error.validator_value if p not in error.instance)
        return f"${path}: required ({missing})"  # names from the schema, not from the record
    return f"${path}: {error.validator}"


def _without_float_vector(record: Any) -> tuple[Any, list | None]:
    """A record carrying an embedding vector of Python floats only, with the vector emptied for the
    schema walk: the schema's vector rule is exactly "array of numbers" (tests pin it), which every
    float satisfies, and walking 384 items costs ~12x the rest of the record."""
    embedding = record.get("embedding") if isinstance(record, dict) else None
    vector = embedding.get("vector") if isinstance(embedding, dict) else None
    if type(vector) is list and vector and set(map(type, vector)) == {float}:
        return {**record, "embedding": {**embedding, "vector": []}}, vector
    return record, None


def _vector_errors(record: dict) -> list[str]:
    """Rules JSON Schema cannot say: the vector has ``dim`` finite values."""
    embedding = record["embedding"]
    vector, dim = embedding["vector"], embedding["dim"]
    if len(vector) != dim:
        return ["$.embedding.vector: length != dim"]
    if not all(map(math.isfinite, vector)):
        return ["$.embedding.vector: not finite"]
    return []


MAX_DEPTH = 64  # nesting levels of a record's arrays and objects
_SCALARS = frozenset({str, int, float, bool, type(None)})


def check_depth(record: Any, limit: int = MAX_DEPTH) -> None:
    """Raise RecordInvalid when arrays and objects nest deeper than ``limit``. orjson reads up to 1024 levels
    but writes at most 254, so a deeper record would pass validation and then stop the service at its produce."""
    stack = [(record, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            raise RecordInvalid(f"$: nested deeper than {limit} levels")
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        if _SCALARS.issuperset(map(type, children)):  # a leaf (an entity, an embedding vector): nothing to push
            continue
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))


def validate(schema_name: str, record: Any) -> None:
    """Raise RecordInvalid listing (at most five) violated rules of ``schema_name``."""
    walked, vector = _without_float_vector(record)
    try:
        fast_validator(schema_name)(walked)
        errors = []
    except Exception:  # noqa: BLE001 - a rejection, or the fast path failing: the reference walks and decides
        errors = sorted(validator(schema_name).iter_errors(walked), key=lambda e: list(e.absolute_path))
    places = [_where(e) for e in errors]
    if not errors and isinstance(record, dict) and isinstance(record.get("embedding"), dict):
        places = _vector_errors(record)
    if places:
        more = f" (+{len(places) - 5} more)" if len(places) > 5 else ""
        raise RecordInvalid(f"{schema_name}: {'; '.join(places[:5])}{more}")
