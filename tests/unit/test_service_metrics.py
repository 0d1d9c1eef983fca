"""Prometheus exposition of a service's numbers (shared/anonstream/runtime/metrics.py), without a broker."""
from __future__ import annotations

import asyncio
import re
import orjson

from anonstream.runtime.metrics import ServiceMetrics, serve

_SAMPLE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? -?[0-9.e+-]+$')


def _samples(text: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        if line.startswith("#"):
            assert re.match(r"^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$", line), line
            continue
        assert _SAMPLE.match(line), line
        name, value = line.rsplit(" ", 1)
        out[name] = float(value)
    return out


def test_exposition_counts_batches_lag_and_stage_numbers():
    m = ServiceMetrics("swap", "0")
    m.observe_batch(0.25, consumed=10, produced=9, dead_lettered=1)
    m.observe_batch(0.5, consumed=4, produced=4, dead_lettered=0)
    m.lag = {("anonstream.chunks-clustered.v1", 2): 7}
    text = m.exposition({"released_by_action": {"swap": 12, "generalize": 3}, "release_version": "r-1a2b",
                         "hot_swaps": 2, "drift_nats": None, "note": "Mr Polat lives in Ankara"})
    s = _samples(text)
    base = 'stage="swap",instance="0"'
    assert s[f'anonstream_records_total{{{base},outcome="consumed"}}'] == 14
    assert s[f'anonstream_records_total{{{base},outcome="dead_lettered"}}'] == 1
    assert s[f"anonstream_batch_seconds_sum{{{base}}}"] == 0.75 and s[f"anonstream_batch_seconds_count{{{base}}}"] == 2
    assert s[f'anonstream_consumer_lag{{{base},topic="anonstream.chunks-clustered.v1",partition="2"}}'] == 7
    assert s[f'anonstream_swap_released_by_action{{{base},key="swap"}}'] == 12
    assert s[f"anonstream_swap_hot_swaps{{{base}}}"] == 2
    assert s[f'anonstream_swap_info{{{base},release_version="r-1a2b"}}'] == 1
    assert "Polat" not in text and "Ankara" not in text  # free text never becomes a label
    assert "drift_nats" not in text  # no value, no sample


def test_label_values_are_escaped():
    m = ServiceMetrics('a"b', "x\\y")
    line = next(l for l in m.exposition().splitlines() if l.startswith("anonstream_records_total"))
    assert 'stage="a\\"b",instance="x\\\\y"' in line


def test_http_endpoints():
    async def scenario():
        healthy = [True]
        server = await serve("127.0.0.1", 0, lambda: "anonstream_up 1\n", lambda: healthy[0])
        port = server.sockets[0].getsockname()[1]

        async def get(path):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            await writer.drain()
            data = await reader.read()
            writer.close()
            return data.decode()

        metrics, health = await get("/metrics"), await get("/healthz")
        healthy[0] = False
        stopping, missing = await get("/healthz"), await get("/nope")
        server.close()
        await server.wait_closed()
        return metrics, health, stopping, missing

    metrics, health, stopping, missing = asyncio.run(scenario())
    assert metrics.startswith("HTTP/1.0 200") and "version=0.0.4" in metrics and metrics.endswith("anonstream_up 1\n")
    assert health.startswith("HTTP/1.0 200") and stopping.startswith("HTTP/1.0 503")
    assert missing.startswith("HTTP/1.0 404")


def test_latency_histograms_process_time_per_stage_end_to_end_at_the_sink():
    sink, ingest = ServiceMetrics("sink", "0"), ServiceMetrics("ingest", "1")
    sink.observe_process(0.003)
    sink.observe_end_to_end(4.0)
    ingest.observe_process(0.2)
    s, t = _samples(sink.exposition()), _samples(ingest.exposition())
    assert s['anonstream_process_seconds_bucket{instance="0",le="0.005",stage="sink"}'] == 1
    assert s['anonstream_process_seconds_count{instance="0",stage="sink"}'] == 1
    assert s['anonstream_end_to_end_seconds_bucket{instance="0",le="2.5",stage="sink"}'] == 0
    assert s['anonstream_end_to_end_seconds_bucket{instance="0",le="5.0",stage="sink"}'] == 1
    assert t['anonstream_process_seconds_bucket{instance="1",le="0.1",stage="ingest"}'] == 0
    assert not [k for k in t if k.startswith("anonstream_end_to_end_seconds_count")]  # only the sink observes it


def test_audit_dashboard_routes_serve_the_page_and_a_summary_without_text(tmp_path):
    from anonstream.config import Settings
    from anonstream.runtime.dashboard import dashboard_routes
    from anonstream.stages.audit import AuditStage
    from anonstream.stores.base import InMemoryCounters

    audit = AuditStage(InMemoryCounters())
    metrics = ServiceMetrics("audit", "0")
    metrics.observe_batch(0.1, consumed=3, produced=0, dead_lettered=0)
    (tmp_path / "frontier.png").write_bytes(b"\x89PNG")
    routes = dashboard_routes(audit, metrics, Settings(dashboard_frontier=str(tmp_path / "frontier.png")))
    assert dashboard_routes(type("S", (), {"name": "swap"})(), metrics, Settings()) == {}
    ctype, page = routes["/"]()
    assert ctype.startswith("text/html") and "/api/summary" in page and "innerHTML" not in page
    from anonstream import topics

    audit.process([(topics.SWAP_LOG, {"action": "swapped", "tuple_digest": None, "doc_id": "d", "release": {}}),
                   (topics.DEAD_LETTER, {"stage": "ingest"})])
    audit.report()
    summary = orjson.loads(routes["/api/summary"]()[1])
    assert summary["service"]["consumed"] == 3 and summary["dead_letters_by_stage"] == {"ingest": 1}
    assert summary["actions"]["swapped"] == 1 and summary["shares"]["swapped"] == 1.0 and summary["frontier"]
    assert routes["/frontier.png"]() == ("image/png", b"\x89PNG")
