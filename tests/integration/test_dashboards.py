"""The dashboards on the real broker and Redis: every stage as its own process with its metrics port, a real
Prometheus (Debian's `prometheus`) scraping them every second.

* the audit service's built-in page (``GET /``) in headless Chromium (Selenium, the system chromedriver): its
  numbers change as documents flow, it shows no text, it shows the configured frontier plot; a screenshot goes
  to ``out/test-artifacts/dashboard.png``;
* every panel query of the Grafana dashboards (deploy/grafana/dashboards/) returns data through Prometheus'
  HTTP API (``/api/v1/query``).
"""
from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

import orjson
import pytest
from aiokafka import AIOKafkaProducer

from anonstream import topics
from anonstream.config import Settings
from anonstream.runtime.kafka import create_topics
from anonstream.runtime.wiring import STAGE_NAMES

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample" / "tab-train-100.jsonl"
ARTIFACTS = ROOT / "out" / "test-artifacts"
DASHBOARDS = sorted((ROOT / "deploy" / "grafana" / "dashboards").glob("*.json"))
LINES = SAMPLE.read_bytes().splitlines()
FIRST, SECOND = LINES[:6], LINES[6:12]  # documents of the browser test, then of the Prometheus test
TRAIN = LINES[50:70]                     # the audit attacker's reference corpus (label: metadata.country)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, timeout: float = 3) -> bytes | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.read()
    except OSError:
        return None


def _frontier_png(path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0.2, 0.5, 0.9], [0.9, 0.7, 0.3], "o-")
    ax.set_xlabel("DR")
    ax.set_ylabel("DU")
    fig.savefig(path)
    plt.close(fig)


@pytest.fixture(scope="module")
def stack(kafka_bootstrap, redis_url, tmp_path_factory):
    if shutil.which("prometheus") is None:
        pytest.fail("prometheus not installed: deploy/system-deps.sh (make setup) installs it")
    tmp = tmp_path_factory.mktemp("dashboards")
    run = uuid.uuid4().hex[:8]
    (tmp / "train.jsonl").write_bytes(b"\n".join(TRAIN) + b"\n")
    _frontier_png(tmp / "frontier.png")
    env = {**os.environ, "ANONSTREAM_BOOTSTRAP": kafka_bootstrap, "ANONSTREAM_REDIS_URL": redis_url,
           "ANONSTREAM_TOPIC_PREFIX": f"dash-{run}", "ANONSTREAM_TENANT": f"dash-{run}",
           "ANONSTREAM_PSEUDONYM_KEY": secrets.token_hex(32), "ANONSTREAM_MIXTURE_K": "4",
           "ANONSTREAM_REFIT_INTERVAL_S": "3600", "ANONSTREAM_REFIT_MIN_SAMPLES": "4",
           # every chunk embedded: the drift panel needs a window of vectors these few documents' sample would not fill
           "ANONSTREAM_EMBED_OTHERS": "1",
           "ANONSTREAM_AUDIT_SNAPSHOT_S": "1", "ANONSTREAM_AUDIT_ATTACK_TRAIN": str(tmp / "train.jsonl"),
           "ANONSTREAM_AUDIT_ATTACK_LABEL": "country", "ANONSTREAM_DASHBOARD_FRONTIER": str(tmp / "frontier.png")}
    settings = Settings(bootstrap=kafka_bootstrap, topic_prefix=f"dash-{run}")
    asyncio.run(create_topics(settings))
    ports = {name: _free_port() for name in STAGE_NAMES}
    processes = {}
    for name in STAGE_NAMES:
        log = tmp / f"{name}.log"
        processes[name] = (subprocess.Popen([sys.executable, "-m", "anonstream.cli", "service", name],
                                            env={**env, "ANONSTREAM_METRICS_PORT": str(ports[name])},
                                            stdout=log.open("wb"), stderr=subprocess.STDOUT), log)
    prometheus_port = _free_port()
    (tmp / "prometheus.yml").write_text(json.dumps({  # JSON is YAML
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "scrape_configs": [{"job_name": "anonstream", "static_configs": [
            {"targets": [f"127.0.0.1:{p}" for p in ports.values()]}]}]}))
    prometheus = subprocess.Popen(
        ["prometheus", f"--config.file={tmp / 'prometheus.yml'}", f"--storage.tsdb.path={tmp / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{prometheus_port}"],
        stdout=(tmp / "prometheus.log").open("wb"), stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while _get(f"http://127.0.0.1:{prometheus_port}/-/ready") is None:
            assert prometheus.poll() is None and time.monotonic() < deadline, (tmp / "prometheus.log").read_text()
            time.sleep(0.5)
        yield {"settings": settings, "ports": ports, "prometheus": prometheus_port, "processes": processes}
    finally:
        prometheus.send_signal(signal.SIGTERM)
        for process, _ in processes.values():
            process.send_signal(signal.SIGTERM)
        for process in [prometheus] + [p for p, _ in processes.values()]:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _alive(stack) -> None:
    for name, (process, log) in stack["processes"].items():
        assert process.poll() is None, f"service {name} died:\n{log.read_text()[-3000:]}"


async def _produce(settings: Settings, lines: list[bytes]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap, acks="all")
    await producer.start()
    try:
        for i, raw in enumerate(lines):
            await producer.send_and_wait(topics.name(topics.DOCUMENTS, settings.topic_prefix), raw, key=b"k%d" % i)
    finally:
        await producer.stop()


def _texts(lines: list[bytes]) -> list[str]:
    """Pieces of the input documents that must never show: the first 40 characters of each line."""
    return [orjson.loads(line)["text"].strip()[:40] for line in lines]


def test_built_in_dashboard_in_headless_chromium(stack):
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        pytest.skip("chromium or chromedriver not installed (Debian chromium, chromium-driver: deploy/system-deps.sh)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    url = f"http://127.0.0.1:{stack['ports']['audit']}/"
    deadline = time.monotonic() + 180
    while _get(url) is None:  # the audit service loads its embedder and attacker first
        _alive(stack)
        assert time.monotonic() < deadline, "the audit service never served its page"
        time.sleep(1)
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,1600"):
        options.add_argument(arg)
    browser = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    try:
        browser.get(url)

        def text(element_id: str) -> str:
            return browser.find_element(By.ID, element_id).text

        deadline = time.monotonic() + 30
        while text("updated") == "never":
            assert time.monotonic() < deadline, "the page never fetched /api/summary"
            time.sleep(0.5)
        before = {k: text(k) for k in ("documents", "chunks", "consumed")}
        assert before == {"documents": "0", "chunks": "0", "consumed": "0"}, before

        asyncio.run(_produce(stack["settings"], FIRST + [b"{not json"]))
        deadline, seen = time.monotonic() + 420, {}
        while time.monotonic() < deadline:
            _alive(stack)
            dead = browser.find_element(By.ID, "dead-letters").text
            seen = {k: text(k) for k in ("documents", "chunks", "consumed", "model-version")}
            if int(seen["documents"]) >= len(FIRST) and "ingest" in dead and text("risk").count("\n") >= 2:
                break
            time.sleep(2)
        assert int(seen["documents"]) >= len(FIRST), seen
        assert int(seen["chunks"]) > 0 and int(seen["consumed"]) > 0 and seen["model-version"] != "–", seen
        shares = browser.find_element(By.ID, "shares").text
        assert "swapped" in shares and "%" in shares, shares
        assert "ingest 1" in browser.find_element(By.ID, "dead-letters").text
        risk = browser.find_element(By.ID, "risk").text
        assert "all time" in risk and "window" in risk, risk
        frontier = browser.find_element(By.CSS_SELECTOR, "#frontier img")
        assert frontier.is_displayed() and browser.execute_script("return arguments[0].naturalWidth", frontier) > 0
        page = browser.page_source + (_get(url + "api/summary") or b"").decode()
        leaked = [t for t in _texts(FIRST) if t in page]
        assert not leaked, "document text on the dashboard"
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        assert browser.save_screenshot(str(ARTIFACTS / "dashboard.png"))
    finally:
        browser.quit()


def _panel_queries() -> list[tuple[str, str]]:
    return [(f"{path.name}: {panel['title']}", target["expr"])
            for path in DASHBOARDS for panel in json.loads(path.read_text())["panels"] for target in panel["targets"]]


def _query(port: int, expr: str) -> list:
    body = _get(f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    assert body is not None, f"Prometheus did not answer {expr}"
    answer = json.loads(body)
    assert answer["status"] == "success", (expr, answer)
    return answer["data"]["result"]


def test_every_grafana_panel_query_returns_data(stack):
    queries = _panel_queries()
    assert len(queries) >= 25
    asyncio.run(_produce(stack["settings"], SECOND + [b'{"doc_id": "no-text"}']))
    deadline, empty = time.monotonic() + 420, queries
    while time.monotonic() < deadline:
        _alive(stack)
        empty = [(title, expr) for title, expr in queries if not _query(stack["prometheus"], expr)]
        if not empty and _query(stack["prometheus"], "sum(anonstream_end_to_end_seconds_count) >= 6"):
            break
        time.sleep(3)
    assert not empty, "panels without data:\n" + "\n".join(f"{t}: {e}" for t, e in empty)
    # the new latency histograms hold observations, and every stage was scraped
    assert len(_query(stack["prometheus"], 'up{job="anonstream"} == 1')) == len(STAGE_NAMES)
    assert {r["metric"]["stage"] for r in _query(stack["prometheus"], "anonstream_process_seconds_count > 0")} \
        == set(STAGE_NAMES)
    latency = _query(stack["prometheus"], "max(anonstream_end_to_end_seconds_sum / anonstream_end_to_end_seconds_count)")
    assert 0 < float(latency[0]["value"][1]) < 900
