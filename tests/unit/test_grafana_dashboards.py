"""The Grafana dashboards (deploy/grafana/) against the services' metric registries: every metric name a panel
queries is one a service exposes (here: the stages of an embedded run on a few TAB documents, rendered by each
service's ``ServiceMetrics``), the dashboards use the provisioned datasource, and the compose file provisions them.
tests/integration/test_dashboards.py runs the same queries on a real Prometheus."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from anonstream.config import Settings
from anonstream.runtime import embedded
from anonstream.runtime.metrics import ServiceMetrics

ROOT = Path(__file__).resolve().parents[2]
GRAFANA = ROOT / "deploy" / "grafana"
DASHBOARDS = sorted((GRAFANA / "dashboards").glob("*.json"))
SAMPLE = ROOT / "data" / "sample" / "tab-train-100.jsonl"

# PromQL words that are not metric names; `up` is Prometheus' own series for each scrape target.
PROMQL_WORDS = {"sum", "avg", "min", "max", "count", "by", "without", "on", "ignoring", "group_left", "group_right",
                "rate", "increase", "irate", "histogram_quantile", "scalar", "and", "or", "unless", "offset"}
PROMETHEUS_OWN = {"up"}


def panel_queries() -> list[tuple[str, str, str]]:
    """(dashboard file, panel title, PromQL) of every panel target."""
    out = []
    for path in DASHBOARDS:
        for panel in json.loads(path.read_text())["panels"]:
            for target in panel["targets"]:
                out.append((path.name, panel["title"], target["expr"]))
    return out


def metric_names(expr: str) -> set[str]:
    """Metric names in a PromQL expression: identifiers outside label matchers, grouping clauses, ranges."""
    expr = re.sub(r"\{[^}]*\}", " ", expr)                                              # label matchers
    expr = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", expr)  # label lists
    expr = re.sub(r"\[[^\]]*\]", " ", expr)                                             # range durations
    names = set(re.findall(r"(?<![\w.])[a-zA-Z_:][a-zA-Z0-9_:]*", expr))
    return names - PROMQL_WORDS


def test_metric_names_of_expressions():
    assert metric_names('sum by (stage, le) (rate(anonstream_process_seconds_bucket{stage="x"}[5m]))') == \
        {"anonstream_process_seconds_bucket"}
    assert metric_names("histogram_quantile(0.95, sum by (le) (rate(a_bucket[1m]))) / scalar(sum(b))") == {"a_bucket", "b"}


def test_dashboards_are_well_formed_and_use_the_provisioned_datasource():
    assert [p.name for p in DASHBOARDS] == ["anonstream-model.json", "anonstream-pipeline.json",
                                           "anonstream-privacy.json"]
    datasource = yaml.safe_load((GRAFANA / "provisioning" / "datasources" / "prometheus.yml").read_text())
    uid = datasource["datasources"][0]["uid"]
    uids = set()
    for path in DASHBOARDS:
        board = json.loads(path.read_text())
        uids.add(board["uid"])
        ids = [p["id"] for p in board["panels"]]
        assert len(ids) == len(set(ids)), path.name
        for panel in board["panels"]:
            assert panel["datasource"]["uid"] == uid and panel["targets"], (path.name, panel["title"])
            assert all(t["expr"].strip() and "$" not in t["expr"] for t in panel["targets"])
    assert len(uids) == len(DASHBOARDS)
    provider = yaml.safe_load((GRAFANA / "provisioning" / "dashboards" / "anonstream.yml").read_text())
    compose = yaml.safe_load((ROOT / "deploy" / "docker-compose.yml").read_text())
    grafana = compose["services"]["grafana"]
    assert grafana["profiles"] == ["monitoring"]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in grafana["volumes"]}
    assert mounts[provider["providers"][0]["options"]["path"]] == "./grafana/dashboards"
    assert mounts["/etc/grafana/provisioning"] == "./grafana/provisioning"


@pytest.fixture(scope="module")
def exposed_names(tmp_path_factory) -> set[str]:
    """Every metric name the services expose after an embedded run of 8 TAB documents and one malformed
    record (a dead letter), with the audit's attacker configured and a small refit sample (so drift exists)."""
    tmp = tmp_path_factory.mktemp("names")
    lines = SAMPLE.read_bytes().splitlines()
    (tmp / "in.jsonl").write_bytes(b"\n".join(lines[:8] + [b'{"doc_id": "bad"}']) + b"\n")
    (tmp / "train.jsonl").write_bytes(b"\n".join(lines[50:70]) + b"\n")
    built = []
    original = embedded.build_stages

    def build(settings, stores):
        built.extend(original(settings, stores))
        return built

    settings = Settings(audit_attack_train=str(tmp / "train.jsonl"), audit_attack_label="country",
                        audit_snapshot_s=0, refit_min_samples=4, refit_interval_s=3600)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(embedded, "build_stages", build)
        embedded.run(tmp / "in.jsonl", tmp / "out.jsonl", settings=settings, progress=False)
    names = set()
    for stage in built:
        metrics = ServiceMetrics(stage.name, "0")  # what the service shell fills in as it runs:
        metrics.observe_process(0.01)
        metrics.observe_batch(0.02, consumed=1, produced=1, dead_lettered=0)
        metrics.lag = {("input", 0): 0}
        text = metrics.exposition(stage.metrics())
        names |= {line.split("{")[0].split(" ")[0] for line in text.splitlines() if line and line[0] != "#"}
    return names


@pytest.mark.slow
def test_every_panel_queries_metrics_the_services_expose(exposed_names):
    missing = {(board, title, name) for board, title, expr in panel_queries()
               for name in metric_names(expr) - PROMETHEUS_OWN if name not in exposed_names}
    assert not missing, f"panels query metrics no service exposes: {sorted(missing)}"
    used = {name for _, _, expr in panel_queries() for name in metric_names(expr)}
    assert {"anonstream_process_seconds_bucket", "anonstream_end_to_end_seconds_bucket", "anonstream_consumer_lag",
            "anonstream_audit_risk_dr", "anonstream_audit_risk_du", "anonstream_refit_drift_nats"} <= used
