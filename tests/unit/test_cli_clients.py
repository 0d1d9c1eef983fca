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
