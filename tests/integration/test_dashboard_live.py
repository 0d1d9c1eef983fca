"""The audit service's live page in headless Chromium, without Kafka: a pii service's metrics endpoint and the
audit's routes served in-process by ``runtime/metrics.serve`` (real HTTP), a real audit stage fed swap-log records,
the scraper stepped on a fake clock. The page's per-stage numbers (records/s, lag, p95, dead letters), its risk
figures and alert reasons are checked against the metrics it read and the audit's snapshot; a screenshot goes to
``out/test-artifacts/dashboard-live.png``."""
from __future__ import annotations

import asyncio
import shutil
import threading
import time
from pathlib import Path

import orjson
import pytest

from anonstream import topics
from anonstream.config import Settings
from anonstream.runtime.dashboard import History, Scraper, dashboard_routes
from anonstream.runtime.metrics import ServiceMetrics, serve
from anonstream.stages.audit import AuditStage
from anonstream.stages.base import InputMessage, StageDriver
from anonstream.stores.base import InMemoryCounters
from anonstream.stores.risk import InMemoryRiskTables

ARTIFACTS = Path(__file__).resolve().parents[2] / "out" / "test-artifacts"
VERSION = "v-live"


def swap_log(doc: str, digest: str, action: str) -> dict:
    """A swap-log record (schemas/swap-log.v1.json) with synthetic digests and values."""
    return {
        "schema": "swap-log.v1", "release": {"schema": "release.v1", "name": "test", "version": VERSION},
        "doc_id": doc, "chunk_index": 0, "chunk_key": f"{doc}#0", "pool": "unclustered", "action": action,
        "reason": "selected" if action != "untouched" else "not_selected", "rare": False, "seen_count": 0,
        "tuple_digest": digest, "pair_id": None, "partner": None, "categories": [],
        "tuple_before": {"ORG": f"org {digest}"}, "tuple_after": {"ORG": f"org {digest}"},
        "changes": [], "released_at": 1.0,
    }


class Loop:
    """An asyncio loop on a thread, for the in-process HTTP servers."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=10)

    def close(self, servers) -> None:
        async def stop():
            for server in servers:
                server.close()
                await server.wait_closed()
        self.run(stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)
        self.loop.close()


def test_live_page_shows_the_numbers_it_read(tmp_path):
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        pytest.skip("chromium or chromedriver not installed (Debian chromium, chromium-driver: deploy/system-deps.sh)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    clock = [1_000.0]
    audit = AuditStage(InMemoryCounters(), InMemoryRiskTables(), clock=lambda: clock[0], release_version=VERSION,
                       swapped=("ORG",), max_dr=0.5)
    audit_metrics, pii = ServiceMetrics("audit", "0"), ServiceMetrics("pii", "0")
    loop = Loop()
    servers = [loop.run(serve("127.0.0.1", 0, pii.exposition, lambda: True))]
    pii_port = servers[0].sockets[0].getsockname()[1]
    scraper = Scraper(History(), audit, audit_metrics.exposition, (f"127.0.0.1:{pii_port}",), every_s=5,
                      clock=lambda: clock[0])
    routes = dashboard_routes(audit, audit_metrics, Settings(), scraper)
    servers.append(loop.run(serve("127.0.0.1", 0, audit_metrics.exposition, lambda: True, routes)))
    audit_port = servers[1].sockets[0].getsockname()[1]

    # the stream: two scrapes 10 s apart, pii consumed 50 (2 dead letters), lag 12, 20 batches of 30 ms;
    # the audit read 8 swap-log records (sample uniques, half swapped) and took a snapshot with a DR alert
    scraper.scrape()
    pii.observe_batch(0.5, consumed=50, produced=48, dead_lettered=2)
    pii.lag = {("t", 0): 7, ("t", 1): 5}
    for _ in range(20):
        pii.observe_process(0.03)
    records = [swap_log(f"d{i}", f"g{i % 6}", "swapped" if i % 2 else "untouched") for i in range(8)]
    handled = StageDriver(audit, "t").handle([InputMessage(topics.name(topics.SWAP_LOG, "t"), 0, i, b"k",
                                                           orjson.dumps(r)) for i, r in enumerate(records)])
    assert not handled.dead_letters
    audit_metrics.observe_batch(0.1, consumed=len(records), produced=0, dead_lettered=0)
    clock[0] = 1_010.0
    snapshot = audit.report()
    scraper.scrape()
    dr = snapshot["risk"][VERSION]["all_time"]["dr"]
    kept = snapshot["risk"][VERSION]["all_time"]["uniques_kept_share"]
    assert dr is not None and dr > 0.5 and snapshot["alerts"], snapshot["risk"][VERSION]["all_time"]
    series = orjson.loads(routes["/api/series"]()[1])

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1800"):
        options.add_argument(arg)
    browser = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    try:
        browser.get(f"http://127.0.0.1:{audit_port}/")

        def cell(stage: str, column: str) -> str:
            return browser.find_element(By.CSS_SELECTOR, f"#stage-{stage} .{column}").text

        deadline = time.monotonic() + 30
        while not browser.find_elements(By.ID, "stage-pii"):
            assert time.monotonic() < deadline, "the page never drew the stage table"
            time.sleep(0.3)
        # the page against the metrics it read: 50 records in 10 s, 7 + 5 lag, p95 of 20 batches in (25, 50] ms
        assert cell("pii", "rate") == "5.00" and series["stages"]["pii"]["records_per_s"][-1] == 5.0
        assert cell("pii", "lag") == "12" and cell("pii", "dead") == "2"
        assert cell("pii", "p95") == f"{1000 * (0.025 + 0.025 * 0.95):.1f}" == "48.8"
        assert cell("audit", "rate") == "0.80" and cell("audit", "lag") == "–"
        for chart in ("chart-rate", "chart-lag", "chart-p95", "chart-dead", "chart-risk"):
            drawn = browser.find_elements(By.CSS_SELECTOR, f"#{chart} polyline, #{chart} circle")
            assert drawn, f"{chart} draws nothing"
        risk = browser.find_element(By.ID, "risk-now").text
        assert f"{VERSION} {dr:.4f} {kept:.4f}" in risk, (risk, dr, kept)
        alerts = browser.find_element(By.ID, "alert-list").text
        assert f"DR {dr:.4f} above the maximum 0.5 (release {VERSION}, all time)" in alerts, alerts
        assert browser.find_element(By.ID, "sources").text == ""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        assert browser.save_screenshot(str(ARTIFACTS / "dashboard-live.png"))
    finally:
        browser.quit()
        loop.close(servers)
