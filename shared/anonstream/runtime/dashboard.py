"""The audit service's built-in dashboard, on its metrics port (``ANONSTREAM_METRICS_PORT``; 9464 in ``make up``).

* ``GET /`` — one self-contained HTML page (no external assets, charts drawn as inline SVG) that polls
  ``/api/summary`` and ``/api/series`` every ``REFRESH_S`` seconds;
* ``GET /api/summary`` — the last snapshot (``summary``): counts, shares of swapped / generalized / suppressed /
  untouched chunks, dead letters per stage, the mixture version, per release version the risk figures (DR, DU,
  theta, alpha, s1/n, k, l, over all time and over the window), the attacker's accuracy and the alerts with
  their reason; never text or entity values (the page writes every value with ``textContent``);
* ``GET /api/series`` — the last hour as time series (``History.series``): per stage records/s, consumer lag,
  p95 processing time and dead letters, from the services' own Prometheus metrics; DR, the share of sample
  uniques kept and the attacker's accuracy of each audit snapshot;
* ``GET /frontier.png`` — the risk-utility frontier of ``anonstream plan-release`` when
  ``ANONSTREAM_DASHBOARD_FRONTIER`` names it (the page shows it then).

Where the per-stage numbers come from: every ``ANONSTREAM_DASHBOARD_SCRAPE_S`` seconds a ``Scraper`` thread reads
the audit service's own registry and GETs the ``/metrics`` of every endpoint listed in ``ANONSTREAM_DASHBOARD_SCRAPE``
(the other stages' metrics ports), and keeps what it read in memory (``runtime/timeseries.py``, one hour). An
endpoint that does not answer is listed on the page with its error kind. Only the audit service serves these
routes; the other services serve ``/metrics`` and ``/healthz`` only.
"""
from __future__ import annotations

import logging
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable, Sequence

from .. import serde
from ..config import Settings
from ..stages.base import Stage
from ..swap.pairing import ACTIONS
from .metrics import Route, ServiceMetrics
from .timeseries import Ring, StagePoint, merge, quantile_series, rates, stage_points

log = logging.getLogger(__name__)

REFRESH_S = 2
HISTORY_S = 3600.0   # the page shows the last hour
P95_WINDOW_S = 60.0  # p95 processing time over the batches of the last minute
SCRAPE_TIMEOUT_S = 2.0
_RISK_FIELDS = ("dr", "theta", "alpha", "s1_over_n", "k", "l", "n", "sample_uniques_before", "p_hat")


def _risk(entry: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for scope in ("all_time", "window"):
        r = entry.get(scope) or {}
        out[scope] = {f: r.get(f) for f in _RISK_FIELDS}
    out["du"] = (entry.get("utility") or {}).get("du")
    return out


def alert_reason(alert: dict[str, Any]) -> str:
    """One line saying why an audit alert fired (``AuditStage._alerts``): the measure, its value, the threshold
    it crossed and where."""
    kind, value, threshold = alert.get("kind"), alert.get("value"), alert.get("threshold")
    where = ", ".join(str(x) for x in (alert.get("release_version") and f"release {alert['release_version']}",
                                       alert.get("scope", "").replace("_", " ")) if x)
    if kind == "dr":
        text = f"DR {value:.4f} above the maximum {threshold:g}"
    elif kind == "k":
        text = f"k-anonymity {value} below the minimum {threshold}"
    elif kind == "identification":
        text = f"identification probability {value:.4f} above the maximum {threshold:g}"
    else:
        text = f"{kind} {value} crossed {threshold}"
    return f"{text} ({where})" if where else text


def summary(stage, metrics: ServiceMetrics, frontier: bool) -> dict[str, Any]:
    """What the page shows, from the audit stage's last snapshot and the service's live record counts."""
    report = stage.last_report or {}
    actions = report.get("actions", {})
    total = sum(actions.values())
    attack = report.get("attack") or None
    return {
        "refresh_s": REFRESH_S,
        "service": {"consumed": metrics.records.get("consumed", 0),
                    "dead_lettered": metrics.records.get("dead_lettered", 0),
                    "last_batch_at": metrics.last_batch_at},
        "snapshot_at": report.get("emitted_at"),
        "documents": report.get("documents", 0),
        "chunks": report.get("chunks", 0),
        "actions": {a: actions.get(a, 0) for a in ACTIONS},
        "shares": {a: (actions.get(a, 0) / total if total else None) for a in ACTIONS},
        "operators": report.get("operators", {}),
        "entities_by_type": report.get("entities_by_type", {}),
        "dead_letters_by_stage": report.get("dead_letters_by_stage", {}),
        "model_version": report.get("model_version"),
        "risk": {version: _risk(entry) for version, entry in sorted((report.get("risk") or {}).items())},
        "attack": None if attack is None else {k: attack.get(k) for k in (
            "chunks", "accuracy_before", "accuracy_after", "relative_drop", "mcnemar_p")},
        "alerts": [{"kind": a.get("kind"), "reason": alert_reason(a)} for a in report.get("alerts", [])],
        "frontier": frontier,
    }


def risk_point(report: dict[str, Any]) -> dict[str, Any]:
    """The figures of one audit snapshot the page draws over time: per release version DR and the share of
    sample uniques kept (all time; paper 000 eq. 2.16), and the attacker's accuracy after the release."""
    return {"versions": {version: {"dr": (entry.get("all_time") or {}).get("dr"),
                                   "uniques_kept_share": (entry.get("all_time") or {}).get("uniques_kept_share")}
                         for version, entry in sorted((report.get("risk") or {}).items())},
            "attack_accuracy_after": (report.get("attack") or {}).get("accuracy_after")}


class History:
    """What the dashboard remembers of the last ``horizon_s`` seconds: each stage's scraped points and each
    audit snapshot's risk figures. Written by the scraper thread, read by the HTTP handler (one lock)."""

    def __init__(self, horizon_s: float = HISTORY_S):
        self.horizon_s = horizon_s
        self.stages: dict[str, Ring[StagePoint]] = {}
        self.risk: Ring[dict[str, Any]] = Ring(horizon_s)
        self.sources: dict[str, str | None] = {}  # endpoint -> kind of its last error, None when it answered
        self._lock = threading.Lock()

    def record_points(self, at: float, points: dict[str, StagePoint], sources: dict[str, str | None]) -> None:
        with self._lock:
            self.sources.update(sources)
            for stage, point in points.items():
                self.stages.setdefault(stage, Ring(self.horizon_s)).add(at, point)

    def record_report(self, report: dict[str, Any] | None) -> None:
        """Keep a snapshot's risk figures, once per snapshot (``emitted_at``)."""
        if not report or report.get("emitted_at") is None:
            return
        with self._lock:
            last = self.risk.last
            if last is None or report["emitted_at"] > last[0]:
                self.risk.add(report["emitted_at"], risk_point(report))

    def series(self) -> dict[str, Any]:
        """The last hour as columns: per stage ``t``, ``records_per_s``, ``lag``, ``p95_s``, ``dead_lettered``;
        ``risk``: ``t``, per release version ``dr`` and ``uniques_kept_share``, ``attack_accuracy_after``."""
        with self._lock:
            stages = {name: list(ring) for name, ring in sorted(self.stages.items())}
            risk = list(self.risk)
            sources = dict(sorted(self.sources.items()))
        out: dict[str, Any] = {"horizon_s": self.horizon_s, "p95_window_s": P95_WINDOW_S, "sources": sources,
                               "stages": {}}
        for name, points in stages.items():
            rate = dict(rates(points))
            p95 = dict(quantile_series(points, 0.95, P95_WINDOW_S))
            out["stages"][name] = {"t": [at for at, _ in points],
                                   "records_per_s": [rate.get(at) for at, _ in points],
                                   "lag": [p.lag for _, p in points],
                                   "p95_s": [p95.get(at) for at, _ in points],
                                   "dead_lettered": [p.dead_lettered for _, p in points]}
        versions = sorted({v for _, point in risk for v in point["versions"]})
        out["risk"] = {"t": [at for at, _ in risk],
                       "versions": {v: {field: [point["versions"].get(v, {}).get(field) for _, point in risk]
                                        for field in ("dr", "uniques_kept_share")} for v in versions},
                       "attack_accuracy_after": [point["attack_accuracy_after"] for _, point in risk]}
        return out


def metrics_url(target: str) -> str:
    """``host:port`` (or a URL) of a service's metrics port -> the URL of its ``/metrics``."""
    url = target if "://" in target else f"http://{target}"
    return url if url.rstrip("/").endswith("/metrics") else url.rstrip("/") + "/metrics"


def _fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=SCRAPE_TIMEOUT_S) as response:
        return response.read().decode()


class Scraper:
    """Every ``every_s`` seconds: the audit's own metrics and the ``/metrics`` of ``targets`` into ``history``,
    with the audit stage's last snapshot."""

    def __init__(self, history: History, stage, own_exposition: Callable[[], str], targets: Sequence[str],
                 every_s: float, clock: Callable[[], float] = time.time, fetch: Callable[[str], str] = _fetch):
        self.history, self.stage, self.own_exposition = history, stage, own_exposition
        self.targets, self.every_s, self.clock, self.fetch = tuple(targets), every_s, clock, fetch
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def scrape(self) -> None:
        at = self.clock()
        read: dict[str, list[StagePoint]] = {}
        sources: dict[str, str | None] = {}
        for source, text in [("self", self.own_exposition())] + [(t, None) for t in self.targets]:
            if text is None:
                try:
                    text = self.fetch(metrics_url(source))
                    sources[source] = None
                except Exception as exc:  # noqa: BLE001 - an endpoint down is shown, not fatal
                    sources[source] = type(exc).__name__
                    continue
            for stage, point in stage_points(text, at).items():
                read.setdefault(stage, []).append(point)
        self.history.record_points(at, {stage: merge(points) for stage, points in read.items()}, sources)
        self.history.record_report(self.stage.last_report)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.scrape()
            except Exception:  # noqa: BLE001 - the dashboard must not take the audit service down
                log.exception("dashboard: scrape failed")
            self._stop.wait(self.every_s)

    def start(self) -> "Scraper":
        self._thread = threading.Thread(target=self._loop, name="dashboard-scraper", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=SCRAPE_TIMEOUT_S * (1 + len(self.targets)))


def dashboard_routes(stage: Stage, metrics: ServiceMetrics, settings: Settings,
                     scraper: Scraper | None = None) -> dict[str, Route]:
    """The extra HTTP routes of a service: the dashboard for the audit service, none for the others. Without a
    ``scraper`` given, one is started on the settings (a daemon thread, it lives as long as the service)."""
    if stage.name != "audit":
        return {}
    if scraper is None:
        scraper = Scraper(History(), stage, metrics.exposition, settings.dashboard_scrape,
                          settings.dashboard_scrape_s).start()
    frontier = Path(settings.dashboard_frontier) if settings.dashboard_frontier else None
    routes: dict[str, Route] = {
        "/": lambda: ("text/html; charset=utf-8", PAGE),
        "/api/summary": lambda: ("application/json", serde.dumps(
            summary(stage, metrics, frontier is not None and frontier.is_file()))),
        "/api/series": lambda: ("application/json", serde.dumps(scraper.history.series())),
    }
    if frontier is not None:
        routes["/frontier.png"] = lambda: ("image/png", frontier.read_bytes())
    return routes


PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>anonstream — audit</title>
<style>
 body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; background: #fafafa; }
 h1 { font-size: 1.3em; margin: 0 0 .2em; } h2 { font-size: 1.05em; margin: 1.2em 0 .4em; }
 .cards { display: flex; flex-wrap: wrap; gap: .8em; }
 .card { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: .6em 1em; min-width: 9em; }
 .card .v { font-size: 1.6em; font-weight: 600; } .card .l { color: #666; font-size: .85em; }
 table { border-collapse: collapse; background: #fff; } td, th { border: 1px solid #ddd; padding: .25em .6em; text-align: right; }
 th { background: #f0f0f0; } td:first-child, th:first-child { text-align: left; }
 .bar { display: flex; height: 1.4em; width: 36em; border: 1px solid #ccc; background: #fff; }
 .bar div { height: 100%; } #muted { color: #888; } img { max-width: 48em; border: 1px solid #ddd; }
 .charts { display: flex; flex-wrap: wrap; gap: 1em; }
 figure { margin: 0; background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: .4em .6em; }
 figcaption { font-weight: 600; font-size: .9em; } svg text { font-size: 10px; fill: #555; }
 .legend span { margin-right: 1em; font-size: .85em; } .legend i { display: inline-block; width: .8em; height: .8em; margin-right: .3em; }
 #alert-list li { color: #b00020; } .down { color: #b00020; }
</style>
</head>
<body>
<h1>anonstream — audit</h1>
<div id="muted">updated <span id="updated">never</span> · snapshot <span id="snapshot">none yet</span> ·
 alerts <span id="alerts">0</span></div>

<h2>Alerts</h2>
<ul id="alert-list"></ul>

<h2>Stages (last hour, read from each service's /metrics)</h2>
<table id="stages"><tr><th>stage</th><th>records/s</th><th>consumer lag</th><th>p95 processing (ms)</th>
 <th>dead letters</th></tr></table>
<div id="sources"></div>
<div class="charts">
 <figure><figcaption>records/s</figcaption><svg id="chart-rate" width="460" height="170"></svg><div class="legend" id="legend-rate"></div></figure>
 <figure><figcaption>consumer lag (records)</figcaption><svg id="chart-lag" width="460" height="170"></svg><div class="legend" id="legend-lag"></div></figure>
 <figure><figcaption>p95 processing time per batch (ms)</figcaption><svg id="chart-p95" width="460" height="170"></svg><div class="legend" id="legend-p95"></div></figure>
 <figure><figcaption>dead letters (total)</figcaption><svg id="chart-dead" width="460" height="170"></svg><div class="legend" id="legend-dead"></div></figure>
</div>

<h2>Risk over time</h2>
<table id="risk-now"><tr><th>release</th><th>DR</th><th>sample uniques kept</th><th>attacker accuracy</th></tr></table>
<div class="charts">
 <figure><figcaption>DR, sample uniques kept, attacker accuracy</figcaption><svg id="chart-risk" width="460" height="170"></svg><div class="legend" id="legend-risk"></div></figure>
</div>

<h2>Counts</h2>
<div class="cards">
 <div class="card"><div class="v" id="documents">0</div><div class="l">documents released</div></div>
 <div class="card"><div class="v" id="chunks">0</div><div class="l">chunks released</div></div>
 <div class="card"><div class="v" id="consumed">0</div><div class="l">records the audit read</div></div>
 <div class="card"><div class="v" id="model-version">–</div><div class="l">mixture version</div></div>
</div>

<h2>What the swap stage did (share of chunks)</h2>
<div class="bar" id="share-bar"></div>
<table id="shares"><tr><th>action</th><th>chunks</th><th>share</th></tr></table>

<h2>Dead letters per stage</h2>
<table id="dead-letters"><tr><th>stage</th><th>records</th></tr></table>

<h2>Risk and utility per release version</h2>
<table id="risk"><tr><th>release</th><th>scope</th><th>DR</th><th>DU</th><th>θ</th><th>α</th><th>s1/n</th>
 <th>k</th><th>l</th><th>n</th></tr></table>

<h2>Attacker</h2>
<table id="attack"><tr><th>chunks</th><th>accuracy before</th><th>accuracy after</th><th>McNemar p</th></tr></table>

<div id="frontier" hidden><h2>Risk–utility frontier (plan-release)</h2><img alt="frontier" src="/frontier.png"></div>

<script>
"use strict";
const COLORS = {swapped: "#4c78a8", generalized: "#f58518", suppressed: "#e45756", untouched: "#bab0ac"};
function fmt(x, digits) {
  if (x === null || x === undefined) return "–";
  if (typeof x !== "number") return String(x);
  return Number.isInteger(x) ? String(x) : x.toFixed(digits === undefined ? 4 : digits);
}
function fixed(x, digits) { return x === null || x === undefined ? "–" : x.toFixed(digits); }
function set(id, value) { document.getElementById(id).textContent = value; }
function rows(table, data) {
  const t = document.getElementById(table);
  while (t.rows.length > 1) t.deleteRow(1);
  for (const cells of data) {
    const r = t.insertRow();
    for (const c of cells) r.insertCell().textContent = c;
  }
}
const PALETTE = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d", "#eeca3b"];
const SVG = "http://www.w3.org/2000/svg";
function el(parent, name, attrs, text) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  parent.appendChild(e); return e;
}
function last(values) {
  for (let i = values.length - 1; i >= 0; i--) if (values[i] !== null && values[i] !== undefined) return values[i];
  return null;
}
function chart(id, lines) {  // lines: [{name, t: [epoch s], v: [number|null]}]; null breaks a line
  const svg = document.getElementById(id), W = +svg.getAttribute("width"), H = +svg.getAttribute("height");
  const L = 46, R = 8, T = 8, B = 20;
  svg.replaceChildren();
  const ts = lines.flatMap(l => l.t), vs = lines.flatMap(l => l.v).filter(v => v !== null && v !== undefined);
  if (!ts.length || !vs.length) { el(svg, "text", {x: L, y: H / 2}, "no data yet"); return; }
  const t0 = Math.min(...ts), t1 = Math.max(t0 + 1, Math.max(...ts)), vmax = Math.max(...vs) || 1;
  const x = t => L + (W - L - R) * (t - t0) / (t1 - t0), y = v => H - B - (H - T - B) * v / vmax;
  el(svg, "line", {x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#999"});
  el(svg, "line", {x1: L, y1: T, x2: L, y2: H - B, stroke: "#999"});
  el(svg, "text", {x: L - 4, y: T + 8, "text-anchor": "end"}, fmt(vmax, 3));
  el(svg, "text", {x: L - 4, y: H - B, "text-anchor": "end"}, "0");
  el(svg, "text", {x: L, y: H - 6}, new Date(t0 * 1000).toLocaleTimeString());
  el(svg, "text", {x: W - R, y: H - 6, "text-anchor": "end"}, new Date(t1 * 1000).toLocaleTimeString());
  const legend = document.getElementById(id.replace("chart", "legend"));
  legend.replaceChildren();
  lines.forEach((line, i) => {
    const color = PALETTE[i % PALETTE.length];
    let segment = [];
    const flush = () => {
      if (segment.length === 1) el(svg, "circle", {cx: segment[0][0], cy: segment[0][1], r: 2, fill: color});
      if (segment.length > 1) el(svg, "polyline", {points: segment.map(p => p.join(",")).join(" "), fill: "none",
                                                    stroke: color, "stroke-width": 1.5});
      segment = [];
    };
    line.t.forEach((t, j) => { const v = line.v[j];
      if (v === null || v === undefined) flush(); else segment.push([x(t).toFixed(1), y(v).toFixed(1)]); });
    flush();
    const key = document.createElement("span"), swatch = document.createElement("i");
    swatch.style.background = color; key.append(swatch, line.name); legend.appendChild(key);
  });
}
function renderSeries(s) {
  const names = Object.keys(s.stages);
  const lines = (field, scale) => names.map(n => ({name: n, t: s.stages[n].t,
    v: s.stages[n][field].map(v => v === null ? null : v * (scale || 1))}));
  chart("chart-rate", lines("records_per_s")); chart("chart-lag", lines("lag"));
  chart("chart-p95", lines("p95_s", 1000)); chart("chart-dead", lines("dead_lettered"));
  const t = document.getElementById("stages");
  while (t.rows.length > 1) t.deleteRow(1);
  for (const n of names) {
    const x = s.stages[n], r = t.insertRow();
    r.id = "stage-" + n;
    const p95 = last(x.p95_s);
    for (const [cls, value] of [["name", n], ["rate", fixed(last(x.records_per_s), 2)], ["lag", fmt(last(x.lag))],
                                ["p95", p95 === null ? "–" : (1000 * p95).toFixed(1)], ["dead", fmt(last(x.dead_lettered))]]) {
      const c = r.insertCell(); c.className = cls; c.textContent = value;
    }
  }
  const down = Object.entries(s.sources).filter(([, e]) => e !== null);
  const sources = document.getElementById("sources");
  sources.className = down.length ? "down" : "";
  sources.textContent = down.length ? "not answering: " + down.map(([k, e]) => k + " (" + e + ")").join(", ") : "";
  const risk = [], now = [];
  for (const [v, x] of Object.entries(s.risk.versions)) {
    risk.push({name: "DR " + v, t: s.risk.t, v: x.dr}, {name: "uniques kept " + v, t: s.risk.t, v: x.uniques_kept_share});
    now.push([v, fixed(last(x.dr), 4), fixed(last(x.uniques_kept_share), 4), fixed(last(s.risk.attack_accuracy_after), 3)]);
  }
  risk.push({name: "attacker accuracy", t: s.risk.t, v: s.risk.attack_accuracy_after});
  chart("chart-risk", risk);
  rows("risk-now", now);
}
function render(s) {
  set("documents", fmt(s.documents)); set("chunks", fmt(s.chunks)); set("consumed", fmt(s.service.consumed));
  set("model-version", fmt(s.model_version)); set("alerts", fmt(s.alerts.length));
  const alerts = document.getElementById("alert-list");
  alerts.replaceChildren();
  for (const a of s.alerts) { const li = document.createElement("li"); li.textContent = a.reason; alerts.appendChild(li); }
  if (!s.alerts.length) { const li = document.createElement("li"); li.textContent = "none"; li.style.color = "#888"; alerts.appendChild(li); }
  set("snapshot", s.snapshot_at ? new Date(s.snapshot_at * 1000).toLocaleTimeString() : "none yet");
  set("updated", new Date().toLocaleTimeString());
  const bar = document.getElementById("share-bar");
  bar.replaceChildren();
  const share = [];
  for (const [a, n] of Object.entries(s.actions)) {
    const p = s.shares[a];
    share.push([a, fmt(n), p === null ? "–" : (100 * p).toFixed(1) + " %"]);
    if (p) { const d = document.createElement("div"); d.style.width = (100 * p) + "%";
             d.style.background = COLORS[a]; d.title = a; bar.appendChild(d); }
  }
  rows("shares", share);
  rows("dead-letters", Object.entries(s.dead_letters_by_stage).map(([k, v]) => [k, fmt(v)]));
  const risk = [];
  for (const [version, r] of Object.entries(s.risk)) {
    for (const scope of ["all_time", "window"]) {
      const x = r[scope];
      risk.push([version, scope.replace("_", " "), fmt(x.dr), scope === "all_time" ? fmt(r.du) : "",
                 fmt(x.theta, 3), fmt(x.alpha, 3), fmt(x.s1_over_n), fmt(x.k), fmt(x.l), fmt(x.n)]);
    }
  }
  rows("risk", risk);
  rows("attack", s.attack ? [[fmt(s.attack.chunks), fmt(s.attack.accuracy_before, 3),
                              fmt(s.attack.accuracy_after, 3), fmt(s.attack.mcnemar_p, 3)]] : []);
  document.getElementById("frontier").hidden = !s.frontier;
}
async function refresh() {
  try {
    const [summary, series] = await Promise.all([fetch("/api/summary", {cache: "no-store"}),
                                                 fetch("/api/series", {cache: "no-store"})]);
    if (summary.ok) render(await summary.json());
    if (series.ok) renderSeries(await series.json());
  } catch (e) { set("updated", "unreachable"); }
}
refresh();
setInterval(refresh, REFRESH_MS);
</script>
</body>
</html>
""".replace("REFRESH_MS", str(REFRESH_S * 1000))
