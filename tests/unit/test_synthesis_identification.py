"""Two-stage identification probability (paper 003 eq. 7-9) over M copies, the style features, and the
audit stage's identification snapshot and alert."""
from __future__ import annotations

import json

import numpy as np
import pytest

from anonstream import contracts, topics
from anonstream.risk.identification import _SENT, style_counts, style_features, two_stage_risk
from anonstream.stages.audit import AuditStage
from anonstream.stages.audit_identification import IdentificationMonitor
from anonstream.stores.base import InMemoryCounters
from anonstream.stores.risk import InMemoryRiskTables

TEXTS = ["I called them!!! Never again, never. Awful (truly) awful.",
         "The policy was renewed on time and the premium stayed the same.",
         "the agent was kind. the agent was quick. the agent was honest.",
         "Rates: fine; service: slow; refund: 3 weeks late?"]


def test_style_counts_add_up_over_chunks():
    a, b = "Never again, never. Awful!", "The agent was kind; rates fine?"
    whole, parts = style_counts(a + " " + b), style_counts(a) + style_counts(b)
    mask = np.ones_like(whole, dtype=bool)
    mask[_SENT] = False                              # sentences: at least one per text
    assert np.array_equal(whole[mask], parts[mask])
    assert style_features(whole).shape == (1, whole.size)       # sentences, syllables -> Yule K, FK grade


def test_stage_one_alone_is_one_over_the_class_and_copies_average():
    X = style_features(np.vstack([style_counts(t) for t in TEXTS]))
    target = style_features(style_counts(TEXTS[0]))[0]
    baseline = two_stage_risk([[("CA",), ("CA",), ("TX",), ("TX",)]], X, [(0, ("CA",), target)])
    assert 0.5 < baseline.per_target[0] <= 1.0                    # own text: stage 2 favours it within {0, 1}
    alone = two_stage_risk([[("CA",), ("TX",), ("TX",), ("TX",)]], X, [(0, ("CA",), target)])
    assert alone.per_target[0] == pytest.approx(1.0)              # a class of one
    moved = [[("TX",), ("CA",), ("TX",), ("TX",)], [("CA",), ("TX",), ("TX",), ("TX",)]]
    assert two_stage_risk(moved, X, [(0, ("CA",), target)]).per_target[0] == pytest.approx(0.5)   # (0 + 1) / 2
    r = two_stage_risk(moved, X, [(0, ("CA",), target), (2, ("NY",), target)], threshold=0.4)
    assert r.max == pytest.approx(0.5) and r.share_above == pytest.approx(0.5) and r.as_dict()["copies"] == 2


def chunk(doc: str, index: int, count: int, text: str, state: str) -> dict:
    return {"doc_id": doc, "chunk_index": index, "chunk_count": count, "text": text, "metadata": {"state": state},
            "entities": [], "changes": []}


def test_audit_snapshot_reports_identification_and_alerts_above_threshold(tmp_path):
    targets = tmp_path / "targets.jsonl"
    targets.write_text(json.dumps({"doc_id": "d0", "text": TEXTS[0], "metadata": {"state": "CA"}}) + "\n")
    monitor = IdentificationMonitor.from_corpus(targets, ["state"])
    audit = AuditStage(InMemoryCounters(), InMemoryRiskTables(), clock=lambda: 1.0, identification=monitor,
                       max_identification=0.09)
    halves = TEXTS[0].split(". ", 1)
    records = [chunk("d0", 0, 2, halves[0], "CA"), chunk("d0", 1, 2, halves[1], "CA")] + \
        [chunk(f"d{i}", 0, 1, t, s) for i, (t, s) in enumerate(zip(TEXTS[1:], ["CA", "TX", "TX"]), start=1)]
    audit.process([(topics.CHUNKS_SANITIZED, r) for r in records + records[:1]])    # a redelivery counts once
    snap = audit.report()
    contracts.validate(topics.AUDIT_METRICS.schema, snap)
    ident = snap["identification"]
    assert ident["released_documents"] == 4 and ident["targets"] == 1 and ident["copies"] == 1
    assert 0.5 < ident["max"] <= 1.0
    assert [a["kind"] for a in snap["alerts"]] == ["identification"]
    quiet = AuditStage(InMemoryCounters(), InMemoryRiskTables(), clock=lambda: 1.0,
                       identification=IdentificationMonitor.from_corpus(targets, ["state"]), max_identification=1.0)
    quiet.process([(topics.CHUNKS_SANITIZED, r) for r in records])
    assert quiet.report()["alerts"] == []
    assert AuditStage(InMemoryCounters(), InMemoryRiskTables()).report()["identification"] is None
