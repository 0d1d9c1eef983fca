"""CLI: `detect` writes one JSON line per document; `eval-pii --json` prints the TAB metrics."""
from __future__ import annotations

import argparse
import json

import pytest

from anonstream.pii.cli import add_commands, main


def test_add_commands_registers_both():
    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers(dest="command"))
    assert parser.parse_args(["detect", "--input", "a", "--output", "b"]).command == "detect"
    assert parser.parse_args(["eval-pii", "--tab", "x.json", "--json"]).json is True


def test_detect_jsonl(tmp_path):
    inp, out = tmp_path / "docs.jsonl", tmp_path / "spans.jsonl"
    docs = [{"doc_id": "a", "text": "Mr Cengiz Polat wrote to jane@example.org on 3 May 2001."},
            {"doc_id": "b", "text": "Nothing to see here."}]
    inp.write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    assert main(["detect", "--input", str(inp), "--output", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["doc_id"] for r in rows] == ["a", "b"]
    text = docs[0]["text"]
    got = {(text[s["start"] : s["end"]], s["type"], s["identifier_type"]) for s in rows[0]["spans"]}
    assert ("Mr Cengiz Polat", "PERSON", "DIRECT") in got
    assert ("jane@example.org", "CODE", "DIRECT") in got
    assert ("3 May 2001", "DATETIME", "QUASI") in got
    assert all(set(s) >= {"start", "end", "type", "identifier_type", "entity_id"} for s in rows[0]["spans"])
    assert rows[1]["spans"] == []


def test_eval_pii_json(tmp_path, capsys):
    text = "Mr Cengiz Polat was born in 1960 in Ankara."
    s = text.index("Cengiz")
    doc = {"doc_id": "d", "text": text, "annotations": {"a1": {"entity_mentions": [
        {"entity_mention_id": "d_a1_em1", "entity_id": "d_a1_e1", "entity_type": "PERSON", "identifier_type": "DIRECT",
         "start_offset": s - 3, "end_offset": s + 12, "span_text": "Mr Cengiz Polat"}]}}}
    path = tmp_path / "gold.json"
    path.write_text(json.dumps([doc]))
    assert main(["eval-pii", "--tab", str(path), "--json", "--weighting", "none"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["recall_direct_entities"] == 1.0
    assert 0.0 < scores["token_precision"] < 1.0  # 1960 and Ankara are masked too, not in this gold


def test_eval_pii_default_weighting_without_wordfreq(tmp_path, capsys, monkeypatch):
    """docs/quickstart.md's `eval-pii --tab FILE` works after plain set-up (no bench extra): no weighted precision,
    a note on stderr; asking for unigram_ic explicitly without wordfreq is a clear error."""
    import importlib.util

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "wordfreq" else real_find_spec(name, *a))
    text = "Mr Cengiz Polat was born in 1960."
    doc = {"doc_id": "d", "text": text, "annotations": {"a1": {"entity_mentions": [
        {"entity_mention_id": "d_a1_em1", "entity_id": "d_a1_e1", "entity_type": "PERSON", "identifier_type": "DIRECT",
         "start_offset": 0, "end_offset": 15, "span_text": "Mr Cengiz Polat"}]}}}
    path = tmp_path / "gold.json"
    path.write_text(json.dumps([doc]))
    assert main(["eval-pii", "--tab", str(path), "--json"]) == 0
    captured = capsys.readouterr()
    scores = json.loads(captured.out)
    assert scores["recall_direct_entities"] == 1.0
    assert not any(k.startswith("weighted_") for k in scores)
    assert "wordfreq" in captured.err
    with pytest.raises(SystemExit, match="wordfreq"):
        main(["eval-pii", "--tab", str(path), "--json", "--weighting", "unigram_ic"])
