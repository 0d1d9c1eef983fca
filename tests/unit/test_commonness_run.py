"""Common values through the embedded run (one code path with the services): a named value enough identities
mention is released as written from the identity that makes it common on, rarer ones change; the reasons reach the
audit; the swap log file holds every released chunk."""
from __future__ import annotations

import json

import pytest

from anonstream import serde
from anonstream.config import Settings
from anonstream.runtime import embedded

TEXT = ("Revenue at Kestrel Dynamics grew in {place} this quarter. "
        "Our partner Halvorsen Logistics expanded its network, and we thank the team.")


@pytest.mark.slow
def test_a_value_common_across_identities_is_released_as_written(tmp_path):
    docs = [{"doc_id": f"d{i}", "text": TEXT.format(place=place), "metadata": {"ticker": f"T{i % 3}"}}
            for i, place in enumerate(["Ohio", "Texas", "Nevada", "Ohio"])]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    release = tmp_path / "release.yaml"
    release.write_text((embedded.Path(__file__).resolve().parents[2] / "deploy" / "release.default.yaml").read_text()
                       + "\nidentity_field: ticker\ncommon_k: 3\n")
    settings = Settings(release=str(release))
    report = embedded.run(tmp_path / "in.jsonl", tmp_path / "out.jsonl", settings=settings, progress=False,
                          swap_log_path=tmp_path / "swap-log.jsonl", batch_documents=1)
    out = {d["doc_id"]: d["text"] for d in map(serde.loads, (tmp_path / "out.jsonl").read_bytes().splitlines())}
    # identities T0, T1 see both names first (counts 1, 2): changed; T2 makes them common (3); d3 is T0 again
    assert "Halvorsen Logistics" not in out["d0"] and "Halvorsen Logistics" not in out["d1"]
    assert "Halvorsen Logistics" in out["d2"] and "Halvorsen Logistics" in out["d3"]
    assert report.audit["decisions"].get("common", 0) >= 2
    logged = [serde.loads(line) for line in (tmp_path / "swap-log.jsonl").read_bytes().splitlines()]
    assert {r["doc_id"] for r in logged} == {"d0", "d1", "d2", "d3"}
