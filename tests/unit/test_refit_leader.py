"""The refit leader election's decision logic (stores/lease.py) on an in-memory lease and a fake clock: one leader
at a time, renewals, takeover after the lease expires, the local bound, fenced publishes, the refit stage gated."""
import numpy as np
import pytest

from anonstream.records import Chunk
from anonstream.stages.refit import Refitter, RefitStage
from anonstream.stores.base import InMemoryModelRegistry, InMemoryReservoir, StaleLeader, StoreUnavailable
from anonstream.stores.lease import InMemoryLease, LeaderElection


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock():
    return Clock()


def _pair(clock, ttl=30.0):
    lease = InMemoryLease(clock)
    return lease, LeaderElection(lease, ttl, clock=clock, name="a"), LeaderElection(lease, ttl, clock=clock, name="b")


def test_one_leader_and_the_standby_takes_over_only_after_the_lease_expires(clock):
    _, a, b = _pair(clock)
    assert a.step() and not b.step()
    assert a.token == 1 and b.token is None
    # a renews every 10 s: b never gets in
    for _ in range(12):
        clock.now += 5
        assert a.step() and not b.step()
    # a dies (no more steps): b keeps trying, and leads once the 30 s lease is over, with a larger token
    died = clock.now
    while not b.step():
        clock.now += 1
        assert clock.now - died <= 30 + 10 + 1  # TTL plus one retry interval
    assert clock.now - died >= 30
    assert b.token == 2
    assert not a.is_leader  # a's local bound passed long ago


def test_the_local_bound_ends_leadership_before_the_lease_can_pass(clock):
    lease, a, b = _pair(clock)
    a.step()
    clock.now += 26.9  # 30 s TTL minus the 10 % margin = 27 s
    assert a.is_leader and a.fence() is not None
    clock.now += 0.2
    assert not a.is_leader and a.fence() is None  # without any step: a paused leader does not write
    assert not b.step()  # ... while the lease itself still has 2.9 s to run


def test_a_refused_renewal_ends_leadership_at_once(clock):
    lease, a, b = _pair(clock)
    a.step()
    clock.now += 31  # a was paused past its lease; b took it
    assert b.step() and b.token == 2
    a._next_attempt = clock.now  # (its step is due)
    assert not a.step()
    assert a.lost == 1 and a.token is None


def test_an_unreachable_store_keeps_leadership_until_the_local_bound_only(clock):
    lease, a, _ = _pair(clock)
    a.step()

    def down(*_):
        raise StoreUnavailable("redis: ConnectionError")

    lease.renew = down
    for _ in range(5):
        clock.now += 5
        a.step()
    assert a.is_leader  # 25 s: still inside the 27 s bound
    clock.now += 3
    assert not a.step() and a.lost == 1


def test_release_hands_over_without_waiting_for_the_ttl(clock):
    _, a, b = _pair(clock)
    a.step()
    a.release()
    clock.now += 10  # b's next attempt
    assert b.step() and b.token == 2


def test_a_stale_fence_is_refused_by_the_registry(clock):
    lease, a, b = _pair(clock)
    registry = InMemoryModelRegistry()
    a.step()
    old = a.fence()
    assert registry.publish(b"m1", {}, fence=old) == 1
    clock.now += 31
    b.step()
    with pytest.raises(StaleLeader):
        registry.publish(b"stale", {}, fence=old)
    assert registry.publish(b"m2", {}, fence=b.fence()) == 2
    assert registry.load(registry.current_version()).model_bytes == b"m2"


def test_the_settings_must_leave_time_to_renew():
    with pytest.raises(ValueError):
        LeaderElection(InMemoryLease(), 10, renew_every_s=9.5)


def _advance(clock, seconds, *elections):
    """Let ``seconds`` pass in 5 s steps, the live instances' election threads stepping meanwhile."""
    for _ in range(int(seconds // 5)):
        clock.now += 5
        for election in elections:
            election.step()
    clock.now += seconds % 5


def _rows(n, d=8, k=3, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(k, d))
    X = np.repeat(centers, -(-n // k), axis=0)[:n] + 0.15 * rng.normal(size=(n, d))
    return (X / np.linalg.norm(X, axis=1, keepdims=True)).astype(np.float32)


def _chunks(X):
    return [(None, Chunk("d", i, len(X), "t", 0, 1, entities=[],
                         embedding={"model": "m", "dim": X.shape[1], "vector": x.tolist()}))
            for i, x in enumerate(X)]


def test_only_the_leading_refit_stage_publishes_and_a_standby_takes_over(clock):
    lease = InMemoryLease(clock)
    registry, reservoir = InMemoryModelRegistry(), InMemoryReservoir(500, seed=0)
    stages = []
    for name in ("a", "b"):
        election = LeaderElection(lease, 30, clock=clock, name=name)
        stages.append(RefitStage(Refitter(reservoir, registry, "pkb", 3, 0.001, interval_s=60, min_samples=32,
                                          clock=clock, election=election)))
    a, b = stages
    for stage in stages:
        stage.refitter.election.step()
        stage.process(_chunks(_rows(120)))  # both feed the shared reservoir
    _advance(clock, 61, a.refitter.election, b.refitter.election)
    assert [len(s.tick(clock.now)) for s in stages] == [1, 0]
    assert registry.current_version() == 1
    assert a.metrics()["leader"] == 1 and b.metrics()["leader"] == 0
    # a dies; b takes over and publishes the next version
    _advance(clock, 100, b.refitter.election)
    assert b.metrics()["leader"] == 1 and b.metrics()["leader_token"] == 2
    assert len(b.tick(clock.now)) == 1 and registry.current_version() == 2
    # a wakes up and is due: it no longer leads, so it neither fits nor publishes
    assert a.tick(clock.now) == [] and registry.current_version() == 2


def test_a_leader_that_loses_the_lease_during_its_fit_does_not_publish(clock, monkeypatch):
    lease = InMemoryLease(clock)
    registry, reservoir = InMemoryModelRegistry(), InMemoryReservoir(500, seed=0)
    election = LeaderElection(lease, 30, clock=clock, name="a")
    stage = RefitStage(Refitter(reservoir, registry, "pkb", 3, 0.001, interval_s=60, min_samples=32, clock=clock,
                                election=election))
    election.step()
    stage.process(_chunks(_rows(120)))
    _advance(clock, 61, election)
    from anonstream.stages import refit as refit_module

    fit = refit_module.fit_checked

    def slow_fit(*args, **kwargs):  # the fit outlasts the lease; another instance takes it meanwhile
        model = fit(*args, **kwargs)
        clock.now += 40
        LeaderElection(lease, 30, clock=clock, name="b").step()
        return model

    monkeypatch.setattr(refit_module, "fit_checked", slow_fit)
    assert stage.tick(clock.now) == []
    assert registry.current_version() is None
    assert stage.metrics()["fenced"] == 1


def test_without_an_election_the_single_refit_stage_publishes_as_before(clock):
    registry, reservoir = InMemoryModelRegistry(), InMemoryReservoir(500, seed=0)
    stage = RefitStage(Refitter(reservoir, registry, "pkb", 3, 0.001, interval_s=60, min_samples=32, clock=clock))
    stage.process(_chunks(_rows(120)))
    clock.now += 61
    assert len(stage.tick(clock.now)) == 1
    assert "leader" not in stage.metrics()


def test_the_synthesis_and_hierarchy_refits_are_fenced_too(clock):
    """The synthesizer's and the hierarchies' publishes ask for the fence just before publishing: a leader whose
    lease lapsed during their fit publishes neither (counted as fenced)."""
    lease = InMemoryLease(clock)
    election = LeaderElection(lease, 30, clock=clock, name="a")

    class Part:
        def __init__(self, fit_s):
            self.fit_s, self.published = fit_s, []

        def maybe_refit(self, fence=None):
            clock.now += self.fit_s  # the fit
            held = fence()
            if held is None:
                raise StaleLeader("the lease expired during the fit")
            self.published.append(held.token)

    synthesis, hierarchies = Part(0), Part(30)
    stage = RefitStage(Refitter(InMemoryReservoir(10), InMemoryModelRegistry(), "pkb", 3, 0.001, interval_s=60,
                                min_samples=32, clock=clock, election=election),
                       synthesis=synthesis, hierarchies=hierarchies)
    election.step()
    stage.tick(clock.now)
    assert synthesis.published == [1] and hierarchies.published == []
    assert stage.metrics()["fenced"] == 1
