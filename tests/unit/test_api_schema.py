"""Schema-driven tests of the REST API: schemathesis generates requests from the API's own
/openapi.json (valid and invalid bodies, paths, headers) and checks every response against it —
no 5xx, only declared status codes, bodies matching the declared schemas, authentication enforced."""
from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from anonstream.api.app import create_app
from anonstream.api.presidio import Analyzer
from anonstream.pii.engine import PiiEngine
from anonstream.stores.base import InMemoryDocumentState

TOKEN = "t0ken-for-the-schema-tests-only"


class MemoryDocuments:
    def __init__(self):
        self.store = InMemoryDocumentState()

    async def submit(self, document):
        self.store.put(document["doc_id"], {**document, "chunk_count": 1, "lineage": {"sink": "1"},
                                            "entity_counts": {}})

    async def result(self, doc_id):
        return self.store.get(doc_id)


@pytest.fixture(scope="module")
def api_schema():
    app = create_app(Analyzer(PiiEngine.from_config()), MemoryDocuments(), TOKEN, max_body_bytes=64 * 1024)
    return schemathesis.openapi.from_asgi("/openapi.json", app)


def test_every_operation_is_tested(api_schema):
    assert {(r.ok().path, r.ok().method.upper()) for r in api_schema.get_all_operations()} == set(OPERATIONS)


# Driven through hypothesis directly: schemathesis' pytest plugin (schema.parametrize / from_fixture) reads
# a private pytest attribute that pytest 9 no longer has.
OPERATIONS = [("/analyze", "POST"), ("/anonymize", "POST"), ("/v1/documents", "POST"), ("/v1/documents/{doc_id}", "GET")]


@pytest.mark.parametrize("path,method", OPERATIONS)
def test_api_conforms_to_its_openapi_document(api_schema, path, method):
    operation = api_schema[path][method]
    # /anonymize answers 422 for schema-valid offsets past the end of the text (as Presidio does; a JSON
    # schema cannot relate the offsets to the text's length), so "valid data accepted" does not apply there.
    excluded = [schemathesis.checks.positive_data_acceptance] if path == "/anonymize" else []

    @given(case=operation.as_strategy())
    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    def run(case):
        case.call_and_validate(headers={"Authorization": f"Bearer {TOKEN}"}, excluded_checks=excluded)

    run()
