"""Refit leadership between real processes on a real Redis and on the Redis Cluster (``redis_target``): each child
runs the lease election as the refit service does (a renewal thread) and, while it leads, "fits" (holds its fence
for a moment) and publishes a mixture version. A leader killed with SIGKILL is replaced by the standby; a leader
frozen with SIGSTOP past its lease wakes up mid-"fit" and its publish is refused by the registry; at no time do two
processes publish."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from anonstream.stores import redis_state
from anonstream.stores.redis_lease import RedisLease

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
TTL_S = 1.5

CHILD = r"""
import os, sys, time
from anonstream.stores.base import StaleLeader
from anonstream.stores.lease import LeaderElection
from anonstream.stores.redis_lease import RedisLease
from anonstream.stores.redis_state import RedisModelRegistry, connect

name, url, cluster, tenant, ttl = sys.argv[1:6]
client = connect(url, cluster=cluster == "1")
election = LeaderElection(RedisLease(client, tenant), float(ttl), name=name)
registry = RedisModelRegistry(client, tenant, keep=1000)
election.start()
print("started", flush=True)
while True:
    fence = election.fence()
    if fence is None:
        time.sleep(0.05)
        continue
    print(f"fit {fence.token}", flush=True)
    time.sleep(0.5)  # the fit: the fence is in hand, the lease may pass meanwhile
    try:
        version = registry.publish(b"model", {"owner": name, "token": fence.token}, fence=fence)
        print(f"published {version} {fence.token}", flush=True)
    except StaleLeader:
        print(f"refused {fence.token}", flush=True)
"""


class Child:
    def __init__(self, name, redis_target, tenant):
        env = {**os.environ, "PYTHONPATH": str(ROOT / "shared")}
        self.name = name
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, name, redis_target.url, "1" if redis_target.cluster else "0", tenant,
             str(TTL_S)], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        os.set_blocking(self.proc.stdout.fileno(), False)
        self.lines: list[str] = []

    def read(self) -> list[str]:
        while True:
            line = self.proc.stdout.readline()
            if not line:
                return self.lines
            self.lines.append(line.strip())

    def wait_for(self, prefix: str, timeout_s: float, after: int = 0) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for line in self.read()[after:]:
                if line.startswith(prefix):
                    return line
            time.sleep(0.02)
        raise AssertionError(f"{self.name}: no {prefix!r} within {timeout_s} s; output {self.lines[-10:]}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


@pytest.fixture
def children(redis_target, redis_tenant):
    made = []

    def make(name):
        child = Child(name, redis_target, redis_tenant)
        made.append(child)
        return child

    yield make
    for child in made:
        child.stop()


def _versions(redis_target, tenant):
    """(version, owner, token) of every stored version, in order."""
    registry = redis_state.RedisModelRegistry(redis_target.connect(), tenant, keep=1000)
    current = registry.current_version() or 0
    out = []
    for v in range(1, current + 1):
        stored = registry.load(v)
        if stored is not None:
            out.append((v, stored.info["owner"], stored.info["token"]))
    return out


def test_a_killed_leader_is_replaced_by_the_standby(redis_target, redis_tenant, children):
    a = children("a")
    a.wait_for("published", 15)
    b = children("b")
    b.wait_for("started", 15)
    time.sleep(2 * TTL_S)
    assert not any(line.startswith(("fit", "published")) for line in b.read())  # b stands by
    os.kill(a.proc.pid, signal.SIGKILL)
    killed = time.monotonic()
    b.wait_for("published", TTL_S + TTL_S / 3 + 5)
    # not before the lease expired: a renewed it every TTL/3, so at most TTL/3 before the kill
    assert time.monotonic() - killed >= TTL_S * 2 / 3 - 0.1
    versions = _versions(redis_target, redis_tenant)
    owners = [owner for _, owner, _ in versions]
    assert owners == sorted(owners) and set(owners) == {"a", "b"}  # a's versions, then b's: never interleaved
    assert {token for _, owner, token in versions if owner == "b"} == {versions[0][2] + 1}


def test_a_frozen_leader_wakes_up_and_its_stale_publish_is_refused(redis_target, redis_tenant, children):
    a = children("a")
    a.wait_for("published", 15)
    b = children("b")
    b.wait_for("started", 15)
    seen = len(a.read())
    fit = a.wait_for("fit", 5, after=seen)  # a holds its fence and "fits"
    os.kill(a.proc.pid, signal.SIGSTOP)  # ... and freezes past its lease
    b.wait_for("published", TTL_S + TTL_S / 3 + 5)
    os.kill(a.proc.pid, signal.SIGCONT)
    refused = a.wait_for("refused", 5, after=seen)
    assert refused.split()[1] == fit.split()[1]
    time.sleep(1.0)
    versions = _versions(redis_target, redis_tenant)
    first_b = next(v for v, owner, _ in versions if owner == "b")
    assert all(owner == "b" for v, owner, _ in versions if v >= first_b)  # nothing of a's after b took over
    tokens = [token for _, _, token in versions]
    assert tokens == sorted(tokens)
