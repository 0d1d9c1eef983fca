"""`make up` (deploy/services.sh) gives every stage a metrics port and the audit's dashboard the list to scrape.

The script's functions are sourced without running ``up``, so no broker, no Redis, no process is started.
"""
import os
import subprocess
from pathlib import Path

from anonstream.runtime.wiring import STAGE_NAMES

SCRIPT = Path(__file__).resolve().parents[2] / "deploy" / "services.sh"


def shell(snippet: str, **env: str) -> str:
    done = subprocess.run(["bash", "-c", f'source <(sed "/^case/,\\$d" "{SCRIPT}"); {snippet}'],
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def ports(**env: str) -> dict[str, int]:
    line = shell('for s in "${STAGES[@]}"; do echo -n "$s=$(metrics_port "$s") "; done', **env)
    return {name: int(port) for name, port in (item.split("=") for item in line.split())}


def test_every_stage_gets_its_own_metrics_port():
    got = ports()
    assert tuple(got) == STAGE_NAMES
    assert got["audit"] == 9464 and len(set(got.values())) == len(got) and 0 not in got.values()


def test_the_dashboard_scrapes_every_stage_but_the_audit():
    got = ports()
    assert shell("scrape_list").split(",") == [f"127.0.0.1:{got[s]}" for s in STAGE_NAMES if s != "audit"]


def test_ports_follow_the_settings():
    got = ports(ANONSTREAM_AUDIT_METRICS_PORT="19464", ANONSTREAM_STAGE_METRICS_PORT_BASE="19500")
    assert got["audit"] == 19464 and got["ingest"] == 19500 and got["sink"] == 19506
