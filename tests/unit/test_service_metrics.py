"""Prometheus exposition of a service's numbers (shared/anonstream/runtime/metrics.py), without a broker: the
output is parsed with prometheus-client's own parser, so it is valid exposition, and checked by name, labels, value."""
from __future__ import annotations

import asyncio
import math

import orjson
import pytest
from prometheus_client.parser import text_string_to_metric_families

from anonstream.runtime.metrics import MAX_INFO_CHARS, ServiceMetrics, StageCollector, serve

BASE = {"stage": "swap", "instance": "0"}


def _parse(text: str) -> tuple[dict[str, str], dict[tuple[str, frozenset], float]]:
    """(type by family name, value by (sample name, labels)) of a text exposition; raises if it is not valid."""
    types, samples = {}, {}
    for family in text_string_to_metric_families(text):
        assert family.name not in types, f"family {family.name} twice"
        types[family.name] = family.type
        for sample in family.samples:
            key = (sample.name, frozenset(sample.labels.items()))
            assert key not in samples, f"series {key} twice"
            samples[key] = sample.value
    return types, samples


def _value(samples, name: str, **labels: str) -> float:
    return samples[(name, frozenset(labels.items()))]


def _names(samples) -> set[str]:
    return {name for name, _ in samples}


def test_exposition_counts_batches_lag_and_stage_numbers():
    m = ServiceMetrics("swap", "0")
    m.observe_batch(0.25, consumed=10, produced=9, dead_lettered=1)
    m.observe_batch(0.5, consumed=4, produced=4, dead_lettered=0)
    m.lag = {("anonstream.chunks-clustered.v1", 2): 7}
    text = m.exposition({"released_by_action": {"swap": 12, "generalize": 3}, "release_version": "r-1a2b",
                         "hot_swaps": 2, "drift_nats": None, "note": "Mr Polat lives in Ankara"})
    types, s = _parse(text)
    assert _value(s, "anonstream_records_total", **BASE, outcome="consumed") == 14
    assert _value(s, "anonstream_records_total", **BASE, outcome="produced") == 13
    assert _value(s, "anonstream_records_total", **BASE, outcome="dead_lettered") == 1
    assert _value(s, "anonstream_batch_seconds_sum", **BASE) == 0.75
    assert _value(s, "anonstream_batch_seconds_count", **BASE) == 2
    assert _value(s, "anonstream_last_batch_timestamp_seconds", **BASE) == pytest.approx(m.last_batch_at)
    assert _value(s, "anonstream_consumer_lag", **BASE, topic="anonstream.chunks-clustered.v1", partition="2") == 7
    assert _value(s, "anonstream_swap_released_by_action", **BASE, key="swap") == 12
    assert _value(s, "anonstream_swap_released_by_action", **BASE, key="generalize") == 3
    assert _value(s, "anonstream_swap_hot_swaps", **BASE) == 2
    assert _value(s, "anonstream_swap_info", **BASE, release_version="r-1a2b") == 1
    assert types["anonstream_records"] == "counter" and types["anonstream_batch_seconds"] == "summary"
    assert types["anonstream_consumer_lag"] == "gauge" and types["anonstream_swap_hot_swaps"] == "gauge"
    assert types["anonstream_swap_info"] == "gauge"  # an info family is a gauge ending in _info in this format
    assert "Polat" not in text and "Ankara" not in text  # free text never becomes a label
    assert "drift_nats" not in text  # no value, no sample
    assert all(labels >= set(BASE.items()) for _, labels in s)  # every series carries stage and instance
    assert m.records == {"consumed": 14, "produced": 13, "dead_lettered": 1}


def test_the_names_and_label_sets_the_dashboards_query():
    m = ServiceMetrics("sink", "3")
    m.lag = {("t", 0): 1}
    m.observe_batch(0.1, consumed=1, produced=1, dead_lettered=0)
    m.observe_process(0.01)
    m.observe_end_to_end(1.0)
    _, s = _parse(m.exposition({"n": 1}))
    label_sets = {}
    for name, labels in s:
        label_sets.setdefault(name, set()).add(frozenset(k for k, _ in labels))
    base = {"stage", "instance"}
    assert label_sets == {
        "anonstream_records_total": {frozenset(base | {"outcome"})},
        "anonstream_records_created": {frozenset(base | {"outcome"})},
        "anonstream_batch_seconds_sum": {frozenset(base)},
        "anonstream_batch_seconds_count": {frozenset(base)},
        "anonstream_batch_seconds_created": {frozenset(base)},
        "anonstream_last_batch_timestamp_seconds": {frozenset(base)},
        "anonstream_consumer_lag": {frozenset(base | {"topic", "partition"})},
        "anonstream_process_seconds_bucket": {frozenset(base | {"le"})},
        "anonstream_process_seconds_sum": {frozenset(base)},
        "anonstream_process_seconds_count": {frozenset(base)},
        "anonstream_process_seconds_created": {frozenset(base)},
        "anonstream_end_to_end_seconds_bucket": {frozenset(base | {"le"})},
        "anonstream_end_to_end_seconds_sum": {frozenset(base)},
        "anonstream_end_to_end_seconds_count": {frozenset(base)},
        "anonstream_end_to_end_seconds_created": {frozenset(base)},
        "anonstream_sink_n": {frozenset(base)},
    }


def test_before_the_first_batch_zero_counts_and_no_timestamp():
    m = ServiceMetrics("embed", "0")
    _, s = _parse(m.exposition())
    assert [_value(s, "anonstream_records_total", stage="embed", instance="0", outcome=o)
            for o in ("consumed", "produced", "dead_lettered")] == [0, 0, 0]
    assert _value(s, "anonstream_batch_seconds_count", stage="embed", instance="0") == 0
    assert "anonstream_last_batch_timestamp_seconds" not in _names(s) and m.last_batch_at is None
    assert "anonstream_consumer_lag" not in _names(s)


def test_lag_of_partitions_no_longer_assigned_disappears():
    m = ServiceMetrics("swap", "0")
    m.lag = {("a", 0): 5, ("a", 1): 6}
    m.lag = {("a", 1): 2, ("b", 0): 0}
    _, s = _parse(m.exposition())
    lag = {(dict(labels)["topic"], dict(labels)["partition"]): v for (name, labels), v in s.items()
           if name == "anonstream_consumer_lag"}
    assert lag == {("a", "1"): 2, ("b", "0"): 0} and dict(m.lag) == {("a", 1): 2, ("b", 0): 0}


def test_records_are_counted_through_the_counter_and_read_only():
    m = ServiceMetrics("ingest", "0")
    m.observe_records(produced=3)
    m.observe_batch(0.1, consumed=2, produced=1, dead_lettered=1)
    assert dict(m.records) == {"consumed": 2, "produced": 4, "dead_lettered": 1}
    with pytest.raises(ValueError):
        m.observe_records(skipped=1)
    with pytest.raises(TypeError):
        m.records["consumed"] = 0  # type: ignore[index]


def test_stage_numbers_are_read_at_scrape_time_by_the_collector():
    numbers = {"hot_swaps": 1}
    m = ServiceMetrics("cluster", "2", lambda: numbers)
    assert _value(_parse(m.exposition())[1], "anonstream_cluster_hot_swaps", stage="cluster", instance="2") == 1
    numbers["hot_swaps"] = 4
    assert _value(_parse(m.exposition())[1], "anonstream_cluster_hot_swaps", stage="cluster", instance="2") == 4
    # an explicit mapping is shown for that scrape only
    assert _value(_parse(m.exposition({"hot_swaps": 9}))[1], "anonstream_cluster_hot_swaps",
                  stage="cluster", instance="2") == 9
    assert _value(_parse(m.exposition())[1], "anonstream_cluster_hot_swaps", stage="cluster", instance="2") == 4
    assert m.stage_collector in m.registry._collector_to_names  # registered in the service's own registry


def test_stage_values_numbers_mappings_and_restricted_text():
    values = {
        "flag": True, "nan": float("nan"), "count": 3, "ratio": 0.5,
        "by": {"a": 1, "b": "text", "c": None, "d": 2.5},
        "empty": {"x": "y"},
        "model_version": "mv-3", "release": "r/1:2@3+4", "too_long": "v" * (MAX_INFO_CHARS + 1),
        "spaces": "two words", "quote": 'a"b', "newline": "a\nb", "stage": "other", "instance": "other",
        "max_len": "v" * MAX_INFO_CHARS, "dash-key": "ok",
    }
    types, s = _parse(ServiceMetrics("refit", "0").exposition(values))
    base = {"stage": "refit", "instance": "0"}
    assert _value(s, "anonstream_refit_flag", **base) == 1.0
    assert _value(s, "anonstream_refit_count", **base) == 3 and _value(s, "anonstream_refit_ratio", **base) == 0.5
    assert _value(s, "anonstream_refit_by", **base, key="a") == 1
    assert _value(s, "anonstream_refit_by", **base, key="d") == 2.5
    assert {dict(labels)["key"] for name, labels in s if name == "anonstream_refit_by"} == {"a", "d"}
    assert "anonstream_refit_nan" not in _names(s) and "anonstream_refit_empty" not in _names(s)
    assert _value(s, "anonstream_refit_info", **base, model_version="mv-3", release="r/1:2@3+4",
                  max_len="v" * MAX_INFO_CHARS, dash_key="ok") == 1
    assert types["anonstream_refit_info"] == "gauge"


def test_colliding_stage_names_give_one_family_each():
    text = ServiceMetrics("swap", "0").exposition({"a-b": 1, "a_b": 2, "info": 5, "version": "v1"})
    types, s = _parse(text)  # asserts that no family and no series appears twice
    assert _value(s, "anonstream_swap_a_b", **BASE) in (1, 2)
    assert _value(s, "anonstream_swap_info", **BASE, version="v1") == 1
    assert ServiceMetrics("swap", "0").exposition({"info": 5}).count("anonstream_swap_info{") == 1


def test_label_values_are_escaped():
    m = ServiceMetrics('a"b', "x\\y\nz")
    text = m.exposition()
    line = next(l for l in text.splitlines() if l.startswith("anonstream_records_total"))
    assert 'stage="a\\"b"' in line and 'instance="x\\\\y\\nz"' in line
    _, s = _parse(text)
    assert _value(s, "anonstream_records_total", stage='a"b', instance="x\\y\nz", outcome="consumed") == 0


def test_all_values_are_finite_numbers_of_valid_exposition():
    m = ServiceMetrics("audit", "0")
    m.observe_batch(0.1, consumed=1, produced=0, dead_lettered=0)
    _, s = _parse(m.exposition({"risk_dr": {"v": 0.1}, "documents": 3}))
    assert all(math.isfinite(v) for v in s.values())


def test_the_collector_alone():
    families = list(StageCollector("x", "1", lambda: {"n": 2, "v": "1.0"}).collect())
    assert [(f.name, f.type) for f in families] == [("anonstream_x_n", "gauge"), ("anonstream_x", "info")]


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
    (st, s), (tt, t) = _parse(sink.exposition()), _parse(ingest.exposition())
    assert st["anonstream_process_seconds"] == st["anonstream_end_to_end_seconds"] == "histogram"
    assert _value(s, "anonstream_process_seconds_bucket", instance="0", le="0.005", stage="sink") == 1
    assert _value(s, "anonstream_process_seconds_count", instance="0", stage="sink") == 1
    assert _value(s, "anonstream_end_to_end_seconds_bucket", instance="0", le="2.5", stage="sink") == 0
    assert _value(s, "anonstream_end_to_end_seconds_bucket", instance="0", le="5.0", stage="sink") == 1
    assert _value(t, "anonstream_process_seconds_bucket", instance="1", le="0.1", stage="ingest") == 0
    assert "anonstream_end_to_end_seconds_count" not in _names(t)  # only the sink observes it


def test_audit_dashboard_routes_serve_the_page_and_a_summary_without_text(tmp_path):
    from anonstream.config import Settings
    from anonstream.runtime.dashboard import History, Scraper, dashboard_routes
    from anonstream.stages.audit import AuditStage
    from anonstream.stores.base import InMemoryCounters

    audit = AuditStage(InMemoryCounters())
    metrics = ServiceMetrics("audit", "0")
    metrics.observe_batch(0.1, consumed=3, produced=0, dead_lettered=0)
    (tmp_path / "frontier.png").write_bytes(b"\x89PNG")
    scraper = Scraper(History(), audit, metrics.exposition, (), every_s=5)  # not started: no thread
    routes = dashboard_routes(audit, metrics, Settings(dashboard_frontier=str(tmp_path / "frontier.png")), scraper)
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
