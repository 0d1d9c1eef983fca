"""Shared fixtures. Integration tests need the real broker, Redis and Redis Cluster that `make test` starts
(deploy/infra.sh); their addresses come from the environment."""
from __future__ import annotations

import os
import socket
from dataclasses import dataclass

import pytest


def _reachable(host_port: str) -> bool:
    host, _, port = host_port.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=1):
            return True
    except OSError:
        return False


def _require(address: str, what: str) -> None:
    if _reachable(address):
        return
    message = f"{what} not reachable at {address}: start it with `deploy/infra.sh up` (make test does)"
    if os.environ.get("ANONSTREAM_REQUIRE_INFRA") == "1":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def redis_url() -> str:
    url = os.environ.get("ANONSTREAM_REDIS_URL", "redis://127.0.0.1:16379/0")
    _require(url.split("//", 1)[1].split("/", 1)[0], "Redis")
    return url


@pytest.fixture(scope="session")
def kafka_bootstrap() -> str:
    bootstrap = os.environ.get("ANONSTREAM_BOOTSTRAP", "127.0.0.1:19092")
    _require(bootstrap.split(",")[0], "Kafka")
    return bootstrap


@pytest.fixture(scope="session")
def redis_cluster_url() -> str:
    """A node of the Redis Cluster (deploy/redis-cluster-local.sh); the client discovers the others."""
    first = os.environ.get("ANONSTREAM_REDIS_CLUSTER_NODES", "127.0.0.1:17001").split(",")[0]
    _require(first, "Redis Cluster")
    return f"redis://{first}/0"


@dataclass(frozen=True)
class RedisTarget:
    """Where a Redis test runs: the single Redis or the Redis Cluster; ``connect()`` makes a new client."""
    url: str
    cluster: bool

    def connect(self):
        from anonstream.stores.redis_state import connect

        return connect(self.url, cluster=self.cluster)

    def environment(self) -> dict[str, str]:
        """The settings' variables that point a service (or a CLI) at this target."""
        return {"ANONSTREAM_REDIS_URL": self.url, "ANONSTREAM_REDIS_CLUSTER": "1" if self.cluster else "0"}


@pytest.fixture(params=["redis", "redis-cluster"])
def redis_target(request) -> RedisTarget:
    """Every test that asks for it runs twice: on the single Redis and on the Redis Cluster."""
    if request.param == "redis-cluster":
        return RedisTarget(request.getfixturevalue("redis_cluster_url"), cluster=True)
    return RedisTarget(request.getfixturevalue("redis_url"), cluster=False)


@pytest.fixture
def redis_tenant(redis_target, request):
    """A fresh tenant name for one test; its Redis keys (``anonstream:{tenant}:*`` and the hash-tagged
    ``anonstream:{{tenant|...}:*``) are deleted afterwards, on every node of a cluster."""
    import uuid

    name = f"it-{request.module.__name__.rsplit('.', 1)[-1]}-{uuid.uuid4().hex[:8]}"
    yield name
    client = redis_target.connect()
    for pattern in (f"anonstream:{name}:*", f"anonstream:{{{name}|*"):
        for key in list(client.scan_iter(pattern)):
            client.delete(key)   # one by one: a cluster refuses a DEL of keys in different slots
    client.close()
