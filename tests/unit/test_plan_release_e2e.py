"""plan-release end to end on 3 demo documents (real spaCy and embedder, embedded stages, no broker)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from anonstream.cli import main
from anonstream.planner.frontier import dominates

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample" / "tab-train-100.jsonl"


@pytest.mark.slow  # 25-45 s on 2 shared cores: spaCy and the encoder load, 3 candidates' re-embedding
def test_plan_release_on_three_documents(tmp_path, capsys):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(SAMPLE.read_text().splitlines(keepends=True)[:3]))
    candidates = tmp_path / "candidates.yaml"
    candidates.write_text(
        "candidates:\n"
        "  - {name: org-loc-r1, swap: [Organization, Location], swap_rate: 1.0}\n"
        "  - {name: loc-r0.5-rare, swap: [Location], swap_rate: 0.5, release: {protect: rare}}\n")
    out = tmp_path / "plan"
    assert main(["plan-release", "--input", str(docs), "--candidates", str(candidates), "--out", str(out),
                 "--quiet", "--write-sanitized", "--risk", "uniques"]) == 0
    err = capsys.readouterr().err
    assert "risk measure uniques kept: " in err and "uniques kept" in err
    rows = json.loads((out / "frontier.json").read_text())
    assert [r["name"] for r in rows] == ["org-loc-r1", "loc-r0.5-rare"]
    assert rows[0]["release"]["J"] == ["Organization", "Location"] and rows[1]["release"]["J"] == ["Location"]
    for r in rows:
        assert set(r) >= {"release", "DR", "DU", "share_changed", "attack_accuracy", "frontier", "optimal"}
        assert r["attack_accuracy"] is None
        assert r["chunks"] > 0 and 0 <= r["share_changed"] <= 1
        assert r["changed_chunks"] == round(r["share_changed"] * r["chunks"])
        if r["changed_chunks"]:
            assert r["DU"] is not None and r["utility"]["rows"] == r["changed_chunks"]
        assert r["DR"] is None or 0.0 <= r["DR"] <= 1.0
        assert r["risk"]["n"] > 0
        assert r["risk_measure"]["name"] == "uniques" and r["risk_measure"]["value"] == r["risk"]["uniques_kept_share"]
        assert (r["DU_note"] is not None) == (r["DU"] is not None and r["DU"] > 1)
    assert sum(r["optimal"] for r in rows) == 1
    chosen = next(r for r in rows if r["optimal"])
    assert chosen["frontier"]
    risk = [r["risk_measure"]["value"] for r in rows]
    assert not any(dominates((v, r["DU"]), (chosen["risk_measure"]["value"], chosen["DU"])) for v, r in zip(risk, rows))
    plan = json.loads((out / "plan.json").read_text())
    assert plan["choice"]["name"] == chosen["name"] and plan["choice"]["rule"] == "tradeoff"
    assert plan["choice"]["risk_measure"] == "uniques" and plan["choice"]["noise"]["pairs"] <= 1
    assert plan["prefix"]["documents"] == 3 and plan["prefix"]["chunks"] == rows[0]["chunks"]
    assert [t["J"] for t in plan["table1"]] == [["Organization", "Location"], ["Location"]]
    assert (out / "frontier.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    sanitized = [json.loads(line) for line in (out / "optimal.sanitized.jsonl").read_text().splitlines()]
    assert len(sanitized) == 3


def test_plan_release_rejects_unknown_categories(tmp_path, capsys):
    docs = tmp_path / "docs.jsonl"
    docs.write_text(SAMPLE.read_text().splitlines(keepends=True)[0])
    candidates = tmp_path / "candidates.yaml"
    candidates.write_text("candidates:\n  - {name: x, swap: [Organisation], swap_rate: 0.1}\n")
    assert main(["plan-release", "--input", str(docs), "--candidates", str(candidates),
                 "--out", str(tmp_path / "o"), "--quiet"]) == 2
    assert "unknown categories ['Organisation']" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
