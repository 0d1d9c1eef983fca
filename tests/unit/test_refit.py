"""refit's core: schedule, drift trigger, warm start, and never publishing a broken model."""
import numpy as np
import pytest

from anonstream.records import Chunk
from anonstream.stages import cluster
from anonstream.stages.refit import Refitter
from anonstream.stores.base import InMemoryModelRegistry, InMemoryReservoir


def _around(direction: int, n: int, d: int = 16, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.normal(scale=0.15, size=(n, d)).astype(np.float32)
    X[:, direction] += 1.0
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _chunks(X):
    return [Chunk("d", i, len(X), "t", 0, 1, embedding={"model": "m", "dim": X.shape[1], "vector": x.tolist()})
            for i, x in enumerate(X)]


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def _refitter(registry, clock, **kw):
    return Refitter(InMemoryReservoir(400), registry, "pkb", 2, 1e-3, interval_s=60, min_samples=40,
                    clock=clock, **kw)


def test_refits_on_schedule_only_when_the_reservoir_is_large_enough():
    registry, clock = InMemoryModelRegistry(), Clock()
    refitter = _refitter(registry, clock)
    refitter.observe(_chunks(_around(0, 20)))
    clock.t = 61
    assert refitter.maybe_refit() is None  # 20 < min_samples
    refitter.observe(_chunks(_around(0, 40, seed=1)))
    event = refitter.maybe_refit()
    assert event["version"] == 1 and event["reason"] == "scheduled refit"
    assert registry.current_version() == 1
    assert refitter.maybe_refit() is None  # not due again yet


def test_a_shift_in_the_data_triggers_an_early_refit():
    registry, clock = InMemoryModelRegistry(), Clock()
    refitter = _refitter(registry, clock, drift_nats=5.0)
    refitter.observe(_chunks(_around(0, 80)))
    clock.t = 61
    assert refitter.maybe_refit()["version"] == 1
    refitter.observe(_chunks(_around(0, 60, seed=2)))  # same distribution: no drift
    assert refitter.due() is None
    refitter.observe(_chunks(_around(5, 60, seed=3)))  # new topic: far from every component
    assert refitter.drift() > 5.0
    event = refitter.maybe_refit()
    assert event is not None and event["reason"].startswith("drift")


def test_a_model_failing_sanity_checks_is_not_published(monkeypatch):
    registry, clock = InMemoryModelRegistry(), Clock()
    refitter = _refitter(registry, clock)
    refitter.observe(_chunks(_around(0, 60)))
    clock.t = 61

    def broken(*args, **kwargs):
        raise ValueError("fitted model failed sanity checks: ['rho has NaN']")

    monkeypatch.setattr("anonstream.stages.refit.fit_checked", broken)
    assert refitter.maybe_refit() is None
    assert registry.current_version() is None and refitter.rejected == 1


def test_fit_checked_rejects_nan_models(monkeypatch):
    real_fit = cluster.fit_mixture

    def nan_fit(*args, **kwargs):
        model = real_fit(*args, **kwargs)
        model.rho[:] = np.nan
        return model

    monkeypatch.setattr(cluster, "fit_mixture", nan_fit)
    with pytest.raises(ValueError, match="sanity"):
        cluster.fit_checked(_around(0, 40), "pkb", 2, 1e-3, "m")


def test_after_the_embedding_space_changes_a_refit_fits_the_new_space_only():
    registry, clock = InMemoryModelRegistry(), Clock()
    refitter = _refitter(registry, clock)
    refitter.observe(_chunks(_around(0, 60)))  # 16-wide vectors of space "m"
    new_space = [Chunk("d", i, 50, "t", 0, 1, embedding={"model": "m@static", "dim": 8, "vector": x.tolist()})
                 for i, x in enumerate(_around(1, 50, d=8, seed=2))]
    refitter.observe(new_space)
    clock.t = 61
    event = refitter.maybe_refit()
    assert event is not None  # the old rows wait, unused: no mixed-width sample, no crash
    model = cluster.SphericalMixture.from_bytes(registry.load(registry.current_version()).model_bytes)
    assert model.dim == 8 and model.embedding_model == "m@static"


def test_a_reservoir_samples_the_rows_of_one_width():
    reservoir = InMemoryReservoir(10)
    reservoir.add(np.ones((3, 4), dtype=np.float32))
    reservoir.add(np.ones((2, 6), dtype=np.float32))
    assert reservoir.sample(6).shape == (2, 6) and reservoir.sample(4).shape == (3, 4)
    assert reservoir.sample(5).shape == (0, 5)
