"""Hierarchies versioned in Redis: store, load, version bump, pruning, and the generalizer reading the current one."""
from __future__ import annotations

import numpy as np
import pytest

from anonstream.hierarchy.generalizer import HierarchyGeneralizer
from anonstream.hierarchy.model import Hierarchy
from anonstream.stores.redis_hierarchy import RedisHierarchyRegistry

pytestmark = pytest.mark.integration


def _hierarchy(label: str) -> Hierarchy:
    paths = {"Masters": ("Masters", f"{label} or similar", "*"), "Doctorate": ("Doctorate", f"{label} or similar", "*"),
             "HS-grad": ("HS-grad", "HS-grad", "*")}
    centroids = {f"{label} or similar": np.array([1.0, 0.0], dtype=np.float32),
                 "HS-grad": np.array([0.0, 1.0], dtype=np.float32)}
    return Hierarchy("education", paths, centroids, {"method": "ward", "embedding_model": "test"})


def test_store_load_and_version_bump(redis_target, redis_tenant, monkeypatch):
    registry = RedisHierarchyRegistry(redis_target.connect(), redis_tenant, keep=2)
    assert registry.current_version("education") is None and registry.load("education") is None
    for name, value in redis_target.environment().items():   # the generalizer connects from the settings
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("ANONSTREAM_TENANT", redis_tenant)
    early = HierarchyGeneralizer(source="redis", category="education")
    assert early.generalize("Doctorate", "Education") == "[Education]"  # nothing published yet: the label
    assert registry.publish("education", _hierarchy("Masters")) == 1
    first = registry.load("education")
    assert first.version == 1 and first.hierarchy.paths["Doctorate"][1] == "Masters or similar"
    assert first.hierarchy.info["version"] == 1
    np.testing.assert_allclose(first.hierarchy.centroids["HS-grad"], [0.0, 1.0])

    assert registry.publish("education", _hierarchy("Graduate")) == 2
    assert registry.publish("education", _hierarchy("Postgraduate")) == 3
    assert registry.current_version("education") == 3
    assert registry.load("education", 2).hierarchy.paths["Masters"][1] == "Graduate or similar"
    assert registry.load("education", 1) is None  # pruned: keep=2
    assert registry.categories() == ["education"]

    assert early.generalize("Doctorate", "Education") == "Postgraduate or similar"  # then the version of first use
    generalizer = HierarchyGeneralizer(source="redis", category="education")
    assert generalizer.generalize("Doctorate", "Education") == "Postgraduate or similar"
    assert generalizer.generalize("HS-grad", "Education") == "[Education]"
    assert registry.publish("education", _hierarchy("Doctoral")) == 4
    assert early.generalize("Doctorate", "Education") == "Postgraduate or similar"  # keeps its version
    assert HierarchyGeneralizer(source="redis", category="education").generalize("Doctorate", "Education") == \
        "Doctoral or similar"
