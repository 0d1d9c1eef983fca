"""ClustEm4Ano builder: nested cuts, labels that never name a rare member, ARX CSV round trip, attaching."""
from __future__ import annotations

import numpy as np
import pytest

from anonstream.hierarchy.builder import build_hierarchy, embedding_text, level_counts
from anonstream.hierarchy.generalizer import HierarchyGeneralizer
from anonstream.hierarchy.model import ROOT, Hierarchy
from anonstream.hierarchy.registry import InMemoryHierarchyRegistry


def fake_embed(texts: list[str]) -> np.ndarray:
    """Deterministic unit vectors: values with the same first letter lie close together."""
    out = []
    for t in texts:
        rng = np.random.default_rng(sum(map(ord, t)))
        v = np.zeros(8)
        v[ord(t[0].lower()) % 8] = 5.0
        v += rng.normal(size=8) * 0.3
        out.append(v / np.linalg.norm(v))
    return np.asarray(out, dtype=np.float32)


VALUES = ["apple", "apricot", "avocado", "banana", "blueberry", "blackberry", "cherry", "cranberry", "coconut",
          "date", "durian", "elderberry", "fig", "grape", "guava", "kiwi", "lemon", "lime"]
COUNTS = {v: (100 if i % 3 == 0 else 2) for i, v in enumerate(VALUES)}


@pytest.mark.parametrize("method", ["ward", "kmeans"])
def test_levels_nest_and_end_at_the_root(method):
    h = build_hierarchy("fruit", COUNTS, fake_embed, method=method)
    assert h.info["cluster_counts"] == [18, 9, 4, 2, 1]
    assert h.levels == 5 and all(p[0] == v for v, p in h.paths.items())
    assert {p[-1] for p in h.paths.values()} == {ROOT}
    for level in range(1, h.levels):
        assert len({p[level] for p in h.paths.values()}) == h.info["cluster_counts"][level]
        parent: dict[str, str] = {}
        for p in h.paths.values():  # each node has exactly one parent: the cuts nest
            assert parent.setdefault(p[level - 1], p[level]) == p[level]


def test_mass_cut_levels_nest_and_split_only_heavy_halves():
    h = build_hierarchy("fruit", COUNTS, fake_embed, cut="mass", ratio=2.0)
    sizes = h.info["cluster_counts"]
    assert sizes[0] == 18 and sizes[-1] == 1 and sizes == sorted(sizes, reverse=True) and len(set(sizes)) == len(sizes)
    for level in range(1, h.levels):
        parent: dict[str, str] = {}
        for p in h.paths.values():
            assert parent.setdefault(p[level - 1], p[level]) == p[level]
    with pytest.raises(ValueError):
        build_hierarchy("fruit", COUNTS, fake_embed, method="kmeans", cut="mass")


@pytest.mark.parametrize("method,cut", [("ward", "count"), ("kmeans", "count"), ("ward", "mass")])
def test_labels_never_name_a_rare_member(method, cut):
    h = build_hierarchy("fruit", COUNTS, fake_embed, method=method, cut=cut, min_label_count=10)
    rare = {v for v, c in COUNTS.items() if c < 10}
    for level in range(1, h.levels):
        nodes: dict[str, set[str]] = {}
        for leaf, p in h.paths.items():
            nodes.setdefault(p[level], set()).add(leaf)
        for label, members in nodes.items():
            if len(members) > 1:
                assert not any(r in label.split(" or similar")[0].split() for r in rare), label
                assert label == ROOT or label.endswith(" or similar") or label.startswith("fruit group")


def test_level_counts_and_embedding_text():
    assert level_counts(42) == [21, 10, 5, 2]
    assert level_counts(3) == []
    assert embedding_text("Self-emp-not-inc") == "Self emp not inc"
    assert embedding_text(" ? ") == "unknown"


def test_arx_csv_round_trip_and_dict_round_trip():
    h = build_hierarchy("fruit", COUNTS, fake_embed)
    assert Hierarchy.from_arx_csv("fruit", h.to_arx_csv()).paths == h.paths
    back = Hierarchy.from_dict(h.to_dict())
    assert back.paths == h.paths and set(back.centroids) == set(h.centroids)


def test_unseen_value_attaches_to_the_nearest_node_and_generalizer_steps_up():
    h = build_hierarchy("fruit", COUNTS, fake_embed)
    vector = fake_embed(["banana"])[0]
    assert h.attach("bananas", vector)[1:] == h.paths["banana"][1:]
    g = HierarchyGeneralizer(hierarchy=h, level=1)
    g._embed = lambda value: fake_embed([value])[0]
    assert g.generalize("Banana", "Fruit") == next(x for x in h.paths["banana"][1:] if x != "banana")
    label = h.paths["apple"][2]
    assert g.generalize(label, "Fruit") in (h.paths["apple"][3], "[Fruit]")
    assert g.generalize("bananas", "Fruit") == g.generalize("banana", "Fruit")


def test_in_memory_registry_versions():
    registry = InMemoryHierarchyRegistry(keep=2)
    h = build_hierarchy("fruit", COUNTS, fake_embed)
    assert registry.load("fruit") is None
    assert [registry.publish("fruit", h) for _ in range(3)] == [1, 2, 3]
    assert registry.current_version("fruit") == 3 and registry.load("fruit", 1) is None
    assert registry.load("fruit").hierarchy is h


def test_release_spec_builds_the_hierarchy_generalizer_from_a_file(tmp_path):
    import json

    from anonstream.generalization import build_generalizer, known_generalizers

    h = build_hierarchy("fruit", COUNTS, fake_embed)
    (tmp_path / "fruit.json").write_text(json.dumps(h.to_dict()))
    (tmp_path / "fruit.csv").write_text(h.to_arx_csv())
    assert "hierarchy" in known_generalizers()
    for name in ("fruit.json", "fruit.csv"):
        g = build_generalizer({"name": "hierarchy", "path": str(tmp_path / name), "level": 2})
        assert g.generalize("apple", "Fruit") == (h.paths["apple"][2] if h.paths["apple"][2] != "apple"
                                                   else h.paths["apple"][3])
    with pytest.raises(ValueError):
        build_generalizer({"name": "hierarchy"})
