"""`anonstream produce` / `consume` without a broker: invalid input lines and an unreachable broker give a
clear message and exit 1 (the broker round trip is tests/integration/test_api_clients_kafka.py)."""
from __future__ import annotations

import json
import socket

from anonstream.cli import main


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_produce_rejects_an_invalid_line_before_sending(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ANONSTREAM_BOOTSTRAP", f"127.0.0.1:{_free_port()}")
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"doc_id": "a", "text": "Fine."}) + "\n" + json.dumps({"doc_id": "b", "text": ""}) + "\n")
    assert main(["produce", "--input", str(path), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"{path}:2: document.v1.json: $.text: minLength" in err
    path.write_text("not json\n")
    assert main(["produce", "--input", str(path), "--quiet"]) == 1
    assert f"{path}:1: not JSON" in capsys.readouterr().err


def test_unreachable_broker_is_a_clear_error(tmp_path, capsys, monkeypatch):
    address = f"127.0.0.1:{_free_port()}"
    monkeypatch.setenv("ANONSTREAM_BOOTSTRAP", address)
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"doc_id": "a", "text": "Secret words here."}) + "\n")
    assert main(["produce", "--input", str(path), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"Kafka is not reachable at {address}" in err and "make up" in err
    assert "Secret words" not in err
    assert main(["consume", "--output", str(tmp_path / "out.jsonl"), "--count", "1", "--quiet"]) == 1
    assert f"Kafka is not reachable at {address}" in capsys.readouterr().err


def test_consume_skips_a_record_that_is_no_sanitized_document():
    from anonstream.runtime.clients import _sanitized_document

    assert _sanitized_document(b"not a document") is None
    assert _sanitized_document(b"[1, 2]") is None
    assert _sanitized_document(b'{"text": "no id"}') is None
    assert _sanitized_document(None) is None
    assert _sanitized_document(b'{"doc_id": "d1", "text": "x"}') == {"doc_id": "d1", "text": "x"}


SANITIZED = {"doc_id": "d1", "text": "[PERSON_1] moved to Oslo.", "metadata": {}, "chunk_count": 1,
             "lineage": {"sink": "2"}, "entity_counts": {"PERSON": 1, "LOC": 1},
             "changes": [{"start": 0, "end": 10, "entity_type": "PERSON", "kind": None, "identifier_type": "DIRECT",
                          "operator": "pseudonym", "release_version": "v"},
                         {"start": 20, "end": 24, "entity_type": "LOC", "kind": "city", "identifier_type": "QUASI",
                          "operator": "swap", "release_version": "v"}]}


def test_highlight_marks_the_surrogates_of_every_document(tmp_path, capsys):
    old = {k: v for k, v in SANITIZED.items() if k != "changes"} | {"doc_id": "d0"}  # written by sink@1
    path = tmp_path / "out.jsonl"
    path.write_text(json.dumps(old) + "\n" + json.dumps(SANITIZED) + "\n")
    assert main(["highlight", "--input", str(path), "--color", "never"]) == 0
    out = capsys.readouterr().out
    assert "── d0 (no changes recorded" in out and "\n[PERSON_1] moved to Oslo.\n" in out
    assert "── d1 (2 changes)\n⟦[PERSON_1]⟧ moved to ⟦Oslo⟧.\n" in out
    assert main(["highlight", "--input", str(path), "--color", "always"]) == 0
    assert "\x1b[1;33m[PERSON_1]\x1b[0m moved to \x1b[1;33mOslo\x1b[0m." in capsys.readouterr().out
    path.write_text("not json\n")
    assert main(["highlight", "--input", str(path)]) == 1
    assert f"{path}:1: not a sanitized document" in capsys.readouterr().err


def test_consume_highlight_prints_each_new_document_marked(tmp_path, capsys, monkeypatch):
    import asyncio
    from types import SimpleNamespace

    from anonstream.config import Settings
    from anonstream.runtime import clients

    record = SimpleNamespace(value=json.dumps(SANITIZED).encode(), topic="t", partition=0, offset=0)

    class Consumer:
        async def start(self): ...

        async def stop(self): ...

        async def commit(self): ...

        async def getmany(self, timeout_ms, max_records):
            return {0: [record, record]}  # a re-emitted document is shown once

    async def reachable(settings, topic): ...

    monkeypatch.setattr(clients, "_check_topic", reachable)
    monkeypatch.setattr("anonstream.runtime.kafka.consumer", lambda *a, **k: Consumer())
    shown = []
    assert asyncio.run(clients.consume(Settings(), None, 1, 5.0, progress=False, show=shown.append)) == 1
    assert shown == [SANITIZED]
    output = tmp_path / "out.jsonl"
    assert main(["consume", "--count", "1", "--highlight", "--quiet", "--color", "never", "--output", str(output)]) == 0
    assert capsys.readouterr().out == "── d1 (2 changes)\n⟦[PERSON_1]⟧ moved to ⟦Oslo⟧.\n"
    assert [json.loads(line) for line in output.read_text().splitlines()] == [SANITIZED]
    assert main(["consume", "--count", "1", "--quiet"]) == 2  # neither --output nor --highlight
    assert "--output, --highlight" in capsys.readouterr().err
