"""Shared fixtures. Integration tests need the real broker and Redis that `make test` starts
(deploy/infra.sh); their addresses come from the environment."""
from __future__ import annotations

import os
import socket

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


@pytest.fixture
def redis_tenant(redis_url, request):
    """A fresh tenant name for one test; its Redis keys (``anonstream:{tenant}:*``) are deleted afterwards."""
    import uuid

    import redis

    name = f"it-{request.module.__name__.rsplit('.', 1)[-1]}-{uuid.uuid4().hex[:8]}"
    yield name
    client = redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter(f"anonstream:{name}:*"))
    if keys:
        client.delete(*keys)
    client.close()
