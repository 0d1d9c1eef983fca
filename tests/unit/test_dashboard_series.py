"""The audit dashboard's memory and scraper (runtime/dashboard.py): per-stage series from the audit's own metrics
and scraped endpoints, an endpoint down listed with its error kind, one risk point per audit snapshot, alerts
with their reason, and a scraper thread that stops."""
from __future__ import annotations

import time

import orjson
import pytest

from anonstream.config import Settings
from anonstream.runtime.dashboard import (History, Scraper, alert_reason, dashboard_routes, metrics_url,
                                          risk_point)
from anonstream.runtime.metrics import ServiceMetrics


class Clock:
    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


class Audit:
    """The part of the audit stage the dashboard reads: its name and last snapshot."""
    name = "audit"

    def __init__(self):
        self.last_report = None


def report(at: float, dr: float, kept: float, accuracy: float | None, alerts=()) -> dict:
    return {"emitted_at": at, "risk": {"v1": {"all_time": {"dr": dr, "uniques_kept_share": kept}}},
            "attack": None if accuracy is None else {"accuracy_after": accuracy}, "alerts": list(alerts)}


def test_series_per_stage_from_own_and_scraped_metrics_and_risk_per_snapshot():
    audit, own, pii = Audit(), ServiceMetrics("audit", "0"), ServiceMetrics("pii", "0")
    served = {"http://127.0.0.1:9001/metrics": pii.exposition}

    def fetch(url: str) -> str:
        if url not in served:
            raise ConnectionRefusedError(url)
        return served[url]()

    clock = Clock(1000.0)
    scraper = Scraper(History(), audit, own.exposition, ("127.0.0.1:9001", "127.0.0.1:9002"), 5, clock, fetch)
    scraper.scrape()
    pii.observe_batch(0.1, consumed=50, produced=50, dead_lettered=1)
    pii.lag = {("x", 0): 4}
    for _ in range(10):
        pii.observe_process(0.03)
    own.observe_batch(0.1, consumed=20, produced=0, dead_lettered=0)
    audit.last_report = report(1004.0, 0.99, 0.25, 0.5)
    clock.now = 1010.0
    scraper.scrape()
    scraper.scrape()  # the same snapshot again: one risk point
    series = scraper.history.series()
    assert set(series["stages"]) == {"audit", "pii"}
    assert series["sources"] == {"127.0.0.1:9001": None, "127.0.0.1:9002":
                                 "ConnectionRefusedError"}
    p = series["stages"]["pii"]
    assert p["records_per_s"][:2] == [None, 5.0] and p["lag"][:2] == [None, 4]
    assert p["p95_s"][1] == pytest.approx(0.04875) and p["dead_lettered"][:2] == [0, 1]
    assert series["stages"]["audit"]["records_per_s"][1] == 2.0
    assert series["risk"] == {"t": [1004.0], "versions": {"v1": {"dr": [0.99], "uniques_kept_share": [0.25]}},
                              "attack_accuracy_after": [0.5]}


def test_a_series_forgets_what_is_older_than_its_horizon():
    audit, own = Audit(), ServiceMetrics("audit", "0")
    clock = Clock(0.0)
    history = History(horizon_s=60)
    scraper = Scraper(history, audit, own.exposition, (), 5, clock)
    for at in (0.0, 30.0, 61.0, 90.0):
        clock.now = at
        audit.last_report = report(at, 0.9, 0.1, None)
        scraper.scrape()
    series = history.series()
    assert series["stages"]["audit"]["t"] == [30.0, 61.0, 90.0] and series["risk"]["t"] == [30.0, 61.0, 90.0]


def test_alerts_carry_their_reason_in_the_summary():
    assert alert_reason({"kind": "dr", "scope": "window", "release_version": "v2", "value": 0.98765,
                         "threshold": 0.95}) == "DR 0.9877 above the maximum 0.95 (release v2, window)"
    assert alert_reason({"kind": "k", "scope": "all_time", "release_version": "v2", "value": 1, "threshold": 3}) \
        == "k-anonymity 1 below the minimum 3 (release v2, all time)"
    assert alert_reason({"kind": "identification", "scope": "all_time", "value": 0.2, "threshold": 0.09}) \
        == "identification probability 0.2000 above the maximum 0.09 (all time)"
    audit, metrics = Audit(), ServiceMetrics("audit", "0")
    audit.last_report = report(1.0, 0.99, 0.3, None, alerts=[
        {"kind": "dr", "scope": "all_time", "release_version": "v1", "value": 0.99, "threshold": 0.9}])
    routes = dashboard_routes(audit, metrics, Settings(), Scraper(History(), audit, metrics.exposition, (), 5))
    summary = orjson.loads(routes["/api/summary"]()[1])
    assert summary["alerts"] == [{"kind": "dr", "reason": "DR 0.9900 above the maximum 0.9 (release v1, all time)"}]
    assert orjson.loads(routes["/api/series"]()[1])["stages"] == {}


def test_risk_point_and_metrics_url():
    assert risk_point({"risk": {"a": {"all_time": {"dr": 0.5}}, "b": {"error": "X"}}, "attack": None}) == {
        "versions": {"a": {"dr": 0.5, "uniques_kept_share": None}, "b": {"dr": None, "uniques_kept_share": None}},
        "attack_accuracy_after": None}
    assert metrics_url("pii:9464") == "http://pii:9464/metrics"
    assert metrics_url("https://h/metrics") == "https://h/metrics"


def test_the_scraper_thread_scrapes_until_stopped():
    audit, own = Audit(), ServiceMetrics("audit", "0")
    scraper = Scraper(History(), audit, own.exposition, (), every_s=0.01).start()
    try:
        for _ in range(200):
            if len(scraper.history.stages.get("audit", ())) >= 3:
                break
            time.sleep(0.01)
    finally:
        scraper.stop()
    assert len(scraper.history.stages["audit"]) >= 3 and not scraper._thread.is_alive()


def test_settings_list_the_endpoints(monkeypatch):
    monkeypatch.setenv("ANONSTREAM_DASHBOARD_SCRAPE", " 127.0.0.1:9461, ,127.0.0.1:9462")
    monkeypatch.setenv("ANONSTREAM_DASHBOARD_SCRAPE_S", "2.5")
    s = Settings()
    assert s.dashboard_scrape == ("127.0.0.1:9461", "127.0.0.1:9462") and s.dashboard_scrape_s == 2.5
