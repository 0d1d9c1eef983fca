"""The refit stage rebuilds value hierarchies from the clear mentions it observes and versions them."""
from __future__ import annotations

import numpy as np

from anonstream.hierarchy.registry import InMemoryHierarchyRegistry
from anonstream.hierarchy.stream import HierarchyRefitter
from anonstream.records import Chunk, EntitySpan
from anonstream.stages.refit import Refitter, RefitStage
from anonstream.stores.base import InMemoryModelRegistry, InMemoryReservoir


def fake_embed(texts: list[str]) -> np.ndarray:
    rng = np.random.default_rng(0)
    basis = {t: rng.normal(size=8) for t in sorted(set(texts))}
    return np.asarray([basis[t] / np.linalg.norm(basis[t]) for t in texts], dtype=np.float32)


def _chunk(i: int, spans: list[tuple[str, str, str | None]]) -> Chunk:
    text = " ".join(value for _, value, _ in spans)
    entities, start = [], 0
    for category, value, surrogate in spans:
        entities.append(EntitySpan(start, start + len(value), category, "QUASI", f"e{i}-{start}", value, surrogate))
        start += len(value) + 1
    return Chunk("d", i, 50, text, 0, 1, entities=entities,
                 embedding={"model": "m", "dim": 2, "vector": [1.0, 0.0]})


def test_refit_stage_rebuilds_and_versions_hierarchies():
    now = [0.0]
    registry = InMemoryHierarchyRegistry()
    hierarchies = HierarchyRefitter(registry, ["Occupation"], fake_embed, "fake", interval_s=10, min_values=4,
                                    method="ward", clock=lambda: now[0])
    refitter = Refitter(InMemoryReservoir(100), InMemoryModelRegistry(), "pkb", 2, 1e-3, interval_s=1e9,
                        min_samples=1000, clock=lambda: now[0])
    stage = RefitStage(refitter, hierarchies=hierarchies)
    jobs = ["nurse", "teacher", "welder", "pilot", "baker", "judge"]
    items = [(None, _chunk(i, [("Occupation", jobs[i % 6], None), ("Person", "Ann Lee", None),
                               ("Occupation", "surgeon", "[Occupation]")])) for i in range(30)]
    stage.process(items)
    assert stage.tick(0.0) == [] and registry.current_version("Occupation") is None  # not due yet
    now[0] = 11.0
    stage.tick(11.0)
    stored = registry.load("Occupation")
    assert stored.version == 1 and set(stored.hierarchy.paths) == set(jobs)  # pseudonymized "surgeon" not counted
    assert registry.categories() == ["Occupation"]
    stage.process(items[:3])
    now[0] = 22.0
    stage.tick(22.0)
    assert registry.current_version("Occupation") == 2 and hierarchies.published == 2
