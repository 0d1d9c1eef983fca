"""The Redis stores against a real Redis and a Redis Cluster (``redis_target``): versioned registry, hot swap,
reservoir, reassembly state."""
import uuid

import numpy as np
import pytest

from anonstream import contracts
from anonstream.mixture.em import fit_mixture
from anonstream.records import Chunk
from anonstream.stages.cluster import ClusterStage
from anonstream.stores import redis_state
from anonstream.stores.base import StoreUnavailable

pytestmark = pytest.mark.integration


@pytest.fixture
def client(redis_target):
    return redis_target.connect()


@pytest.fixture
def tenant():
    return f"test-{uuid.uuid4().hex[:8]}"


def _unit_rows(n, d, seed):
    X = np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _clustered_rows(n, d, k, seed):
    """``n`` unit rows around ``k`` random directions: a 3-component fit keeps its 3 components (on rows with no
    groups at all, EM drops components that collapse onto single points, mixture/em.py ``max_rho``)."""
    rng = np.random.default_rng(seed)
    X = np.repeat(_unit_rows(k, d, seed + 1), -(-n // k), axis=0)[:n] + 0.15 * rng.normal(size=(n, d))
    return (X / np.linalg.norm(X, axis=1, keepdims=True)).astype(np.float32)


def _chunks(X):
    return [(None, Chunk("d", i, len(X), "t", 0, 1, entities=[],
                         embedding={"model": "m", "dim": X.shape[1], "vector": x.tolist()}))
            for i, x in enumerate(X)]


def test_registry_versions_are_atomic_pruned_and_hot_swapped(client, tenant):
    registry = redis_state.RedisModelRegistry(client, tenant, keep=2)
    stage = ClusterStage(registry, k=2)
    X = _clustered_rows(40, 8, 3, 0)
    first = stage.process(_chunks(X))  # no model yet: bootstrap publishes version 1
    assert registry.current_version() == 1 and stage.model_version == 1
    assert all("previous" not in emits[-1].value["cluster"] for emits in first)
    for _ in range(3):
        model = fit_mixture(X, "pkb", 3, seed=1)
        registry.publish(model.to_bytes(), {"reason": "test"})
    assert registry.current_version() == 4
    assert registry.load(2) is None and registry.load(3) is not None  # keep=2
    out = stage.process(_chunks(X[:5]))
    assert stage.model_version == 4 and stage.model.k == 3
    assert {emits[0].value["cluster"]["model_version"] for emits in out} == {4}
    # the component under the model the stage had before the swap, for the swap pools' handover
    assert {emits[0].value["cluster"]["previous"]["model_version"] for emits in out} == {1}
    for emits in out:
        contracts.validate("chunk-clustered.v1.json", emits[0].value)
    restarted = ClusterStage(registry, k=2).process(_chunks(X[:5]))  # a restart loads the version before
    assert {emits[0].value["cluster"]["previous"]["model_version"] for emits in restarted} == {3}


def test_cluster_keeps_its_cached_model_when_redis_is_unreachable(client, tenant):
    registry = redis_state.RedisModelRegistry(client, tenant)
    stage = ClusterStage(registry, k=2)
    X = _unit_rows(30, 8, 2)
    stage.process(_chunks(X))
    stage.registry = redis_state.RedisModelRegistry(redis_state.connect("redis://127.0.0.1:1/0"), tenant)
    out = stage.process(_chunks(X[:3]))
    assert len(out) == 3 and stage.registry_unavailable == 1
    fresh = ClusterStage(stage.registry, k=2)
    with pytest.raises(StoreUnavailable):
        fresh.process(_chunks(X[:3]))  # no cached model: nothing to fall back on


def test_reservoir_is_bounded_and_survives_a_new_client(client, tenant, redis_target):
    reservoir = redis_state.RedisReservoir(client, tenant, capacity=50, seed=0)
    reservoir.add(_unit_rows(30, 4, 3))
    reservoir.add(_unit_rows(70, 4, 4))
    again = redis_state.RedisReservoir(redis_target.connect(), tenant, capacity=50)
    assert again.seen() == 100
    sample = again.sample()
    assert sample.shape == (50, 4) and sample.dtype == np.float32
    assert again.sample(4).shape == (50, 4) and again.sample(6).shape == (0, 6)  # rows of one width only


def test_pending_chunks_and_emitted_marks(client, tenant):
    pending = redis_state.RedisPendingChunks(client, tenant, ttl_s=60)
    assert pending.add("d", 1, 2, {"i": 1}, 1.0) == 1
    assert pending.add("d", 1, 2, {"i": 1}, 1.0) == 1  # idempotent
    assert pending.add("d", 0, 2, {"i": 0}, 2.0) == 2
    assert pending.take("d") == [{"i": 0}, {"i": 1}]
    assert pending.overdue(1.5) == ["d"] and pending.overdue(1.0) == []  # first seen at 1.0
    assert pending.mark_emitted("d", "fp") is True
    assert pending.mark_emitted("d", "fp") is False
    assert pending.was_emitted("d", "fp") and pending.take("d") == [] and pending.overdue(9.0) == []


def test_counters_add_up(client, tenant):
    counters = redis_state.RedisCounters(client, tenant)
    counters.incr({"a": 2, "b": 1})
    counters.incr({"a": 3})
    assert counters.snapshot() == {"a": 5, "b": 1}


def test_connect_settings_follows_the_cluster_setting(redis_target, monkeypatch, tenant):
    """ANONSTREAM_REDIS_CLUSTER picks the client the services make; a store round-trips through it."""
    import redis

    from anonstream.config import Settings

    for name, value in redis_target.environment().items():
        monkeypatch.setenv(name, value)
    client = redis_state.connect_settings(Settings())
    assert isinstance(client, redis.RedisCluster) is redis_target.cluster
    states = redis_state.RedisDocumentState(client, tenant, "it-doc", ttl_s=60)
    states.put("d", {"n": 1})
    assert states.get("d") == {"n": 1}
    states.delete("d")
    assert states.get("d") is None
