"""The audit service's built-in dashboard, on its metrics port (``ANONSTREAM_METRICS_PORT``; 9464 in ``make up``).

* ``GET /`` — one self-contained HTML page (no external assets) that polls ``/api/summary`` every
  ``REFRESH_S`` seconds: live counts, shares of swapped / generalized / suppressed / untouched chunks, dead
  letters per stage, the mixture version, and per release version the risk figures (DR, DU, theta, alpha, s1/n,
  k, l, over all time and over the window) and the attacker's accuracy;
* ``GET /api/summary`` — that JSON (``summary``): counts, shares, versions and estimates, never text or entity
  values (the page writes every value with ``textContent``);
* ``GET /frontier.png`` — the risk-utility frontier of ``anonstream plan-release`` when
  ``ANONSTREAM_DASHBOARD_FRONTIER`` names it (the page shows it then).

Only the audit service serves these routes; the other services serve ``/metrics`` and ``/healthz`` only.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import serde
from ..config import Settings
from ..stages.base import Stage
from ..swap.pairing import ACTIONS
from .metrics import Route, ServiceMetrics

REFRESH_S = 2
_RISK_FIELDS = ("dr", "theta", "alpha", "s1_over_n", "k", "l", "n", "sample_uniques_before", "p_hat")


def _risk(entry: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for scope in ("all_time", "window"):
        r = entry.get(scope) or {}
        out[scope] = {f: r.get(f) for f in _RISK_FIELDS}
    out["du"] = (entry.get("utility") or {}).get("du")
    return out


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
        "alerts": len(report.get("alerts", [])),
        "frontier": frontier,
    }


def dashboard_routes(stage: Stage, metrics: ServiceMetrics, settings: Settings) -> dict[str, Route]:
    """The extra HTTP routes of a service: the dashboard for the audit service, none for the others."""
    if stage.name != "audit":
        return {}
    frontier = Path(settings.dashboard_frontier) if settings.dashboard_frontier else None
    routes: dict[str, Route] = {
        "/": lambda: ("text/html; charset=utf-8", PAGE),
        "/api/summary": lambda: ("application/json", serde.dumps(
            summary(stage, metrics, frontier is not None and frontier.is_file()))),
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
</style>
</head>
<body>
<h1>anonstream — audit</h1>
<div id="muted">updated <span id="updated">never</span> · snapshot <span id="snapshot">none yet</span> ·
 alerts <span id="alerts">0</span></div>

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
function set(id, value) { document.getElementById(id).textContent = value; }
function rows(table, data) {
  const t = document.getElementById(table);
  while (t.rows.length > 1) t.deleteRow(1);
  for (const cells of data) {
    const r = t.insertRow();
    for (const c of cells) r.insertCell().textContent = c;
  }
}
function render(s) {
  set("documents", fmt(s.documents)); set("chunks", fmt(s.chunks)); set("consumed", fmt(s.service.consumed));
  set("model-version", fmt(s.model_version)); set("alerts", fmt(s.alerts));
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
    const response = await fetch("/api/summary", {cache: "no-store"});
    if (response.ok) render(await response.json());
  } catch (e) { set("updated", "unreachable"); }
}
refresh();
setInterval(refresh, REFRESH_MS);
</script>
</body>
</html>
""".replace("REFRESH_MS", str(REFRESH_S * 1000))
