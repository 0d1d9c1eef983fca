"""REST API (anonstream serve) through FastAPI's test client: authentication, the size limit, Presidio's
analyze/anonymize shapes and offsets, the operators, /v1/documents on an in-memory backend."""
from __future__ import annotations

import hashlib
import json
import logging

import pytest
from fastapi.testclient import TestClient

from anonstream.api.app import create_app
from anonstream.api.presidio import Analyzer, InvalidRequest, Result, anonymize, resolve_conflicts
from anonstream.pii.engine import PiiEngine
from anonstream.stores.base import InMemoryDocumentState

TOKEN = "t0ken-for-the-unit-tests-only"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
TEXT = ("Mr Cengiz Polat wrote to jane.doe@example.org from 192.168.0.1 on 3 May 2001; "
        "call +44 20 7946 0958, IBAN DE89370400440532013000.")


class MemoryDocuments:
    def __init__(self):
        self.submitted: list[dict] = []
        self.store = InMemoryDocumentState()

    async def submit(self, document):
        self.submitted.append(document)

    async def result(self, doc_id):
        return self.store.get(doc_id)


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer(PiiEngine.from_config())


@pytest.fixture
def documents() -> MemoryDocuments:
    return MemoryDocuments()


@pytest.fixture
def client(analyzer, documents) -> TestClient:
    return TestClient(create_app(analyzer, documents, TOKEN, max_body_bytes=4096))


# --- authentication and limits --------------------------------------------------------------------------
@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong-token-wrong-token"},
                                     {"Authorization": f"Basic {TOKEN}"}, {"Authorization": TOKEN}])
@pytest.mark.parametrize("method,path", [("post", "/analyze"), ("post", "/anonymize"), ("post", "/v1/documents"),
                                         ("get", "/v1/documents/abc")])
def test_401_without_the_right_token(client, headers, method, path):
    response = client.request(method, path, headers=headers, json={"text": "x", "language": "en"})
    assert response.status_code == 401
    assert response.json() == {"error": "missing or wrong bearer token"}
    assert response.headers["www-authenticate"] == "Bearer"


def test_openapi_is_public_and_declares_bearer_auth(client):
    spec = client.get("/openapi.json").json()
    assert {"/analyze", "/anonymize", "/v1/documents", "/v1/documents/{doc_id}"} <= set(spec["paths"])
    assert any(s.get("scheme") == "bearer" for s in spec["components"]["securitySchemes"].values())


def test_413_over_the_limit_by_length_and_when_chunked(client):
    big = json.dumps({"text": "a" * 5000, "language": "en"})
    response = client.post("/analyze", content=big, headers={**AUTH, "Content-Type": "application/json"})
    assert response.status_code == 413 and "4096" in response.json()["error"]

    def chunks():  # no Content-Length: the limit holds while reading
        for _ in range(10):
            yield b"a" * 1000

    response = client.post("/analyze", content=chunks(), headers={**AUTH, "Content-Type": "application/json"})
    assert response.status_code == 413
    assert client.post("/analyze", headers=AUTH, json={"text": "a" * 3000, "language": "en"}).status_code == 200


def test_no_auth_when_built_without_a_token(analyzer):
    client = TestClient(create_app(analyzer, None, None))
    assert client.post("/analyze", json={"text": "Hello.", "language": "en"}).status_code == 200
    assert "/v1/documents" not in client.get("/openapi.json").json()["paths"]


# --- analyze ------------------------------------------------------------------------------------------
def test_analyze_shape_offsets_and_presidio_names(client):
    response = client.post("/analyze", headers=AUTH, json={"text": TEXT, "language": "en"})
    assert response.status_code == 200
    results = response.json()
    got = {(r["entity_type"], TEXT[r["start"]:r["end"]]) for r in results}
    assert {("PERSON", "Mr Cengiz Polat"), ("EMAIL_ADDRESS", "jane.doe@example.org"),
            ("IP_ADDRESS", "192.168.0.1"), ("DATE_TIME", "3 May 2001"), ("PHONE_NUMBER", "+44 20 7946 0958"),
            ("IBAN_CODE", "DE89370400440532013000")} <= got
    for r in results:
        assert set(r) == {"entity_type", "start", "end", "score", "analysis_explanation", "recognition_metadata"}
        assert 0 <= r["start"] < r["end"] <= len(TEXT) and 0 < r["score"] <= 1
    assert [r["start"] for r in results] == sorted(r["start"] for r in results)


def test_analyze_entities_and_threshold_filter(client):
    only = client.post("/analyze", headers=AUTH, json={"text": TEXT, "language": "en",
                                                        "entities": ["EMAIL_ADDRESS", "PERSON"]}).json()
    assert {r["entity_type"] for r in only} == {"EMAIL_ADDRESS", "PERSON"}
    high = client.post("/analyze", headers=AUTH, json={"text": TEXT, "language": "en", "score_threshold": 0.99}).json()
    assert high and all(r["score"] >= 0.99 for r in high)
    assert "PERSON" not in {r["entity_type"] for r in high}  # NER names score 0.85


def test_analyze_unsupported_language_is_422(client):
    response = client.post("/analyze", headers=AUTH, json={"text": TEXT, "language": "de"})
    assert response.status_code == 422 and "language" in response.json()["error"]


def test_validation_errors_do_not_echo_the_text(client):
    secret = "Cengiz Polat lives at 12 Rue X"
    response = client.post("/analyze", headers=AUTH, json={"text": secret, "language": 7})
    assert response.status_code == 422 and secret not in response.text


# --- anonymize ----------------------------------------------------------------------------------------
def test_anonymize_operators_and_offsets_into_the_new_text(client):
    text = "Call Jane Doe at 034453334 or mail jd@example.org, id 42."
    results = [{"entity_type": "PERSON", "start": 5, "end": 13, "score": 0.85},
               {"entity_type": "PHONE_NUMBER", "start": 17, "end": 26, "score": 0.9},
               {"entity_type": "EMAIL_ADDRESS", "start": 35, "end": 49, "score": 1.0},
               {"entity_type": "ID", "start": 54, "end": 56, "score": 0.5}]
    anonymizers = {"PERSON": {"type": "replace", "new_value": "<NAME>"},
                   "PHONE_NUMBER": {"type": "mask", "masking_char": "*", "chars_to_mask": 4, "from_end": True},
                   "EMAIL_ADDRESS": {"type": "hash", "salt": "pepper"},
                   "DEFAULT": {"type": "redact"}}
    response = client.post("/anonymize", headers=AUTH,
                           json={"text": text, "analyzer_results": results, "anonymizers": anonymizers})
    assert response.status_code == 200
    body = response.json()
    digest = hashlib.sha256(b"pepper" + b"jd@example.org").hexdigest()
    assert body["text"] == f"Call <NAME> at 03445**** or mail {digest}, id ."
    for item in body["items"]:
        assert body["text"][item["start"]:item["end"]] == item["text"]
    assert [i["operator"] for i in body["items"]] == ["redact", "hash", "mask", "replace"]  # last span first


def test_anonymize_default_is_replace_with_the_entity_type():
    out = anonymize("Jane rang.", [{"entity_type": "PERSON", "start": 0, "end": 4, "score": 0.8}])
    assert out == {"text": "<PERSON> rang.", "items": [{"start": 0, "end": 8, "entity_type": "PERSON",
                                                        "text": "<PERSON>", "operator": "replace"}]}


def test_mask_hash_keep_details():
    r = [{"entity_type": "X", "start": 0, "end": 6, "score": 1.0}]
    assert anonymize("secret", r, {"X": {"type": "mask", "masking_char": "#", "chars_to_mask": 99}})["text"] == "######"
    assert anonymize("secret", r, {"X": {"type": "mask", "masking_char": "#", "chars_to_mask": 2}})["text"] == "##cret"
    assert anonymize("secret", r, {"X": {"type": "keep"}})["text"] == "secret"
    one = anonymize("secret", r, {"X": {"type": "hash", "hash_type": "sha512"}})["text"]
    assert len(one) == 128 and one == anonymize("secret", r, {"X": {"type": "hash", "hash_type": "sha512"}})["text"]
    assert one != hashlib.sha512(b"secret").hexdigest()  # salted: no lookup table of hashed values
    with pytest.raises(InvalidRequest, match="masking_char"):
        anonymize("secret", r, {"X": {"type": "mask", "masking_char": "##", "chars_to_mask": 2}})
    with pytest.raises(InvalidRequest, match="text length"):
        anonymize("secret", [{"entity_type": "X", "start": 2, "end": 60, "score": 1.0}])
    with pytest.raises(InvalidRequest, match="empty"):
        anonymize("", r)


def test_conflicts_as_presidio_resolves_them():
    merged = resolve_conflicts([Result("A", 0, 5, 0.5), Result("A", 3, 9, 0.9)])
    assert [(r.entity_type, r.start, r.end, r.score) for r in merged] == [("A", 0, 9, 0.9)]
    contained = resolve_conflicts([Result("NAME", 24, 32, 0.8), Result("FIRST", 24, 28, 0.8), Result("LAST", 29, 32, 0.6)])
    assert [(r.entity_type, r.start, r.end) for r in contained] == [("NAME", 24, 32)]
    same = resolve_conflicts([Result("A", 0, 4, 0.9), Result("B", 0, 4, 0.5)])
    assert [r.entity_type for r in same] == ["A"]
    partial = resolve_conflicts([Result("A", 0, 6, 0.5), Result("B", 4, 10, 0.9)])
    assert [(r.entity_type, r.start, r.end) for r in partial] == [("A", 0, 4), ("B", 4, 10)]


def test_unknown_operator_is_422(client):
    response = client.post("/anonymize", headers=AUTH, json={
        "text": "Jane", "analyzer_results": [{"entity_type": "PERSON", "start": 0, "end": 4, "score": 1}],
        "anonymizers": {"PERSON": {"type": "encrypt", "key": "1111111111111111"}}})
    assert response.status_code == 422


# --- the official Presidio REST clients' JSON ------------------------------------------------------------
def test_presidio_e2e_request_bodies(client):
    """Request bodies exactly as Presidio's own REST tests send them, with Presidio's expected answers:
    microsoft/presidio e2e-tests/tests/test_anonymizer.py
    (test_given_anonymize_called_with_valid_request_then_expected_valid_response_returned) and
    e2e-tests/tests/test_api_e2e_integration_flows.py (test_given_text_with_pii_then_analyze_and_anonymize_successfully,
    whose analyzer_results are the Presidio analyzer's answer for that text)."""
    body = """
    {
        "text": "hello world, my name is Jane Doe. My number is: 034453334",
        "anonymizers": {
            "DEFAULT": { "type": "replace", "new_value": "ANONYMIZED" },
            "PHONE_NUMBER": { "type": "mask", "masking_char": "*", "chars_to_mask": 4, "from_end": true }
        },
        "analyzer_results": [
            { "start": 24, "end": 32, "score": 0.8, "entity_type": "NAME" },
            { "start": 24, "end": 28, "score": 0.8, "entity_type": "FIRST_NAME" },
            { "start": 29, "end": 32, "score": 0.6, "entity_type": "LAST_NAME" },
            { "start": 48, "end": 57,  "score": 0.95,
                "entity_type": "PHONE_NUMBER" }
        ]
    }
    """
    response = client.post("/anonymize", content=body, headers={**AUTH, "Content-Type": "application/json"})
    assert response.status_code == 200
    assert response.json()["text"] == "hello world, my name is ANONYMIZED. My number is: 03445****"

    analyzer_request = {"text": "John Smith drivers license is AC432223", "language": "en"}
    analyzed = client.post("/analyze", headers=AUTH, json=analyzer_request)
    assert analyzed.status_code == 200
    assert {"entity_type": "PERSON", "start": 0, "end": 10} in [
        {k: r[k] for k in ("entity_type", "start", "end")} for r in analyzed.json()]
    presidio_analyzer_data = [
        {"entity_type": "PERSON", "start": 0, "end": 10, "score": 0.85, "analysis_explanation": None},
        {"entity_type": "US_DRIVER_LICENSE", "start": 30, "end": 38, "score": 0.6499999999999999,
         "analysis_explanation": None}]
    anonymizer_request = {
        "text": analyzer_request["text"],
        "anonymizers": {
            "DEFAULT": {"type": "replace", "new_value": "ANONYMIZED"},
            "US_DRIVER_LICENSE": {"type": "mask", "masking_char": "*", "chars_to_mask": 4, "from_end": True},
            "PERSON": {"type": "replace", "new_value": "<PERSON>"},
        },
        "analyzer_results": presidio_analyzer_data,
    }
    expected = json.loads("""{"text": "<PERSON> drivers license is AC43****", "items": [{"operator": "mask", "entity_type": "US_DRIVER_LICENSE", "start": 28, "end": 36, "text": "AC43****"}, {"operator": "replace", "entity_type": "PERSON", "start": 0, "end": 8, "text": "<PERSON>"}]}""")
    response = client.post("/anonymize", headers=AUTH, json=anonymizer_request)
    assert response.status_code == 200 and response.json() == expected
    # our own analyzer's answer goes through the anonymizer as Presidio's does
    response = client.post("/anonymize", headers=AUTH, json={**anonymizer_request, "analyzer_results": analyzed.json()})
    assert response.status_code == 200 and response.json()["text"].startswith("<PERSON> drivers license")


# --- /v1/documents ------------------------------------------------------------------------------------
def test_submit_is_202_with_an_id_and_validated(client, documents):
    response = client.post("/v1/documents", headers=AUTH, json={"doc_id": "d-1", "text": "Jane rang.", "metadata": {"k": 1}})
    assert response.status_code == 202 and response.json() == {"doc_id": "d-1", "status": "accepted"}
    generated = client.post("/v1/documents", headers=AUTH, json={"text": "No id given."})
    assert generated.status_code == 202
    assert [d["doc_id"] for d in documents.submitted] == ["d-1", generated.json()["doc_id"]]
    assert documents.submitted[0] == {"doc_id": "d-1", "text": "Jane rang.", "metadata": {"k": 1}}
    for bad in ({"doc_id": "has space", "text": "x"}, {"text": ""}, {"doc_id": "a", "text": "x", "extra": 1}):
        assert client.post("/v1/documents", headers=AUTH, json=bad).status_code == 422
    assert len(documents.submitted) == 2


def test_result_is_404_until_sanitized(client, documents):
    assert client.get("/v1/documents/d-2", headers=AUTH).status_code == 404
    sanitized = {"doc_id": "d-2", "text": "[PERSON_1] rang.", "metadata": {}, "chunk_count": 1,
                 "lineage": {"sink": "1"}, "entity_counts": {"PERSON": 1}}
    documents.store.put("d-2", sanitized)
    response = client.get("/v1/documents/d-2", headers=AUTH)
    assert response.status_code == 200 and response.json() == sanitized


def test_result_carries_the_documents_changes_and_openapi_declares_them(client, documents):
    change = {"start": 0, "end": 10, "entity_type": "PERSON", "kind": None, "identifier_type": "DIRECT",
              "operator": "pseudonym", "release_version": "abc123"}
    sanitized = {"doc_id": "d-4", "text": "[PERSON_1] rang.", "metadata": {}, "chunk_count": 1,
                 "lineage": {"sink": "2"}, "entity_counts": {"PERSON": 1}, "changes": [change]}
    documents.store.put("d-4", sanitized)
    response = client.get("/v1/documents/d-4", headers=AUTH)
    assert response.status_code == 200 and response.json() == sanitized
    components = client.get("/openapi.json").json()["components"]["schemas"]
    assert set(components["DocumentChange"]["properties"]) == set(change)


def test_anonymize_items_mark_exactly_the_replaced_characters():
    """Presidio's items have the contract of a sanitized document's changes (offsets into the new text), so
    the same consumer code marks the surrogates of both."""
    from anonstream.document_changes import changed_characters, highlight

    text = "Jane Doe met Bo in Oslo."
    results = [{"entity_type": "PERSON", "start": 0, "end": 8, "score": 0.9},
               {"entity_type": "PERSON", "start": 13, "end": 15, "score": 0.9},
               {"entity_type": "LOCATION", "start": 19, "end": 23, "score": 0.9}]
    out = anonymize(text, results, {"LOCATION": {"type": "mask", "masking_char": "#", "chars_to_mask": 4}})
    assert out["text"] == "<PERSON> met <PERSON> in ####."
    assert highlight(out["text"], out["items"]) == "⟦<PERSON>⟧ met ⟦<PERSON>⟧ in ⟦####⟧."
    mask = changed_characters(len(out["text"]), out["items"])
    assert "".join(c for c, m in zip(out["text"], mask) if not m) == " met  in ."


def test_raw_text_never_logged(client, caplog):
    secret = "Cengiz Polat"
    with caplog.at_level(logging.DEBUG):
        client.post("/analyze", headers=AUTH, json={"text": f"Mr {secret} rang.", "language": "en"})
        client.post("/v1/documents", headers=AUTH, json={"doc_id": "d-3", "text": f"Mr {secret} rang."})
        client.post("/analyze", headers=AUTH, json={"text": f"Mr {secret} rang.", "language": 1})
    assert secret not in caplog.text


def test_serve_refuses_to_start_without_a_token(monkeypatch, capsys):
    from anonstream.cli import main

    monkeypatch.delenv("ANONSTREAM_API_TOKEN", raising=False)
    assert main(["serve", "--no-documents"]) == 2
    assert "--insecure-no-auth" in capsys.readouterr().err
    monkeypatch.setenv("ANONSTREAM_API_TOKEN", "short")
    assert main(["serve", "--no-documents"]) == 2
    assert "at least 16" in capsys.readouterr().err


SANITIZED = {"doc_id": "d-9", "text": "[PERSON_1] rang.", "metadata": {}, "chunk_count": 1,
             "lineage": {"sink": "1"}, "entity_counts": {}}


def test_index_sanitized_skips_what_is_not_a_sanitized_document():
    from anonstream.api.documents import index_sanitized

    store = InMemoryDocumentState()
    assert index_sanitized(store, [b"junk", json.dumps({"doc_id": "x"}).encode(), json.dumps(SANITIZED).encode()]) == 1
    assert store.get("d-9") == SANITIZED and store.get("x") is None


async def test_indexer_rereads_a_batch_while_redis_is_down():
    """A batch whose Redis write fails is read again (seek back, no commit) instead of being lost."""
    import asyncio
    from types import SimpleNamespace

    from anonstream.api.documents import KafkaDocuments
    from anonstream.config import Settings
    from anonstream.stores.base import StoreUnavailable

    record = SimpleNamespace(offset=7, value=json.dumps(SANITIZED).encode())

    class Consumer:
        def __init__(self):
            self.calls, self.seeks, self.commits = 0, [], 0

        async def getmany(self, timeout_ms, max_records):
            self.calls += 1
            if self.calls > 2:
                await asyncio.sleep(3600)
            return {"tp0": [record]}

        def seek(self, tp, offset):
            self.seeks.append((tp, offset))

        async def commit(self):
            self.commits += 1

    class FlakyStore(InMemoryDocumentState):
        failures = 1

        def put(self, doc_id, state):
            if self.failures:
                self.failures -= 1
                raise StoreUnavailable("redis: ConnectionError")
            super().put(doc_id, state)

    backend = KafkaDocuments(Settings())
    backend._consumer, backend._store = Consumer(), FlakyStore()
    task = asyncio.create_task(backend._index())
    for _ in range(100):
        await asyncio.sleep(0.05)
        if backend._consumer.commits:
            break
    task.cancel()
    assert backend._consumer.seeks == [("tp0", 7)] and backend._consumer.commits == 1
    assert backend._store.get("d-9") == SANITIZED
