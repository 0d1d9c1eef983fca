"""A value generalization hierarchy (VGH, paper 004 §2): every leaf value with its generalizations from level
0 (the value itself) to the root ``*``, as ARX reads it (one CSV row per leaf, ``;``-separated), plus the
centroid of every level-1 node so that a value the hierarchy has never seen attaches to its nearest node.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

ROOT = "*"


@dataclass
class Hierarchy:
    attribute: str
    paths: dict[str, tuple[str, ...]]  # leaf -> (leaf, level-1 label, ..., "*")
    centroids: dict[str, np.ndarray] = field(default_factory=dict)  # level-1 label -> unit vector
    info: dict[str, Any] = field(default_factory=dict)  # method, embedding model, cluster counts, ...

    def __post_init__(self) -> None:
        depths = {len(p) for p in self.paths.values()}
        if len(depths) != 1:
            raise ValueError(f"{self.attribute}: every leaf needs the same number of levels, got {sorted(depths)}")
        self._by_fold = {leaf.casefold(): leaf for leaf in self.paths}

    @property
    def levels(self) -> int:
        return len(next(iter(self.paths.values())))

    def path(self, value: str) -> tuple[str, ...] | None:
        """The value's generalizations (case- and space-insensitive), None when it is no leaf."""
        leaf = self._by_fold.get(" ".join(value.split()).casefold())
        return None if leaf is None else self.paths[leaf]

    def level_of(self, label: str) -> int | None:
        """The lowest level above the leaves where ``label`` names a node (None: no such node)."""
        for level in range(1, self.levels):
            if any(p[level] == label for p in self.paths.values()):
                return level
        return None

    def attach(self, value: str, vector: np.ndarray) -> tuple[str, ...]:
        """An unseen value's path: itself, then the path of the level-1 node of the nearest centroid."""
        if not self.centroids:
            return (value,) + (ROOT,) * (self.levels - 1)
        labels = list(self.centroids)
        nearest = labels[int(np.argmax(np.stack([self.centroids[x] for x in labels]) @ vector))]
        above = next(p for p in self.paths.values() if p[1] == nearest)
        return (value, *above[1:])

    def to_arx_csv(self) -> str:
        return "".join(";".join(p) + "\n" for p in self.paths.values())

    @classmethod
    def from_arx_csv(cls, attribute: str, text: str, info: dict[str, Any] | None = None) -> "Hierarchy":
        rows = [line.split(";") for line in text.splitlines() if line.strip()]
        return cls(attribute, {r[0]: tuple(r) for r in rows}, {}, dict(info or {}))

    def to_dict(self) -> dict[str, Any]:
        return {"attribute": self.attribute, "paths": {k: list(v) for k, v in self.paths.items()},
                "centroids": {k: np.asarray(v, dtype=np.float32).tolist() for k, v in self.centroids.items()},
                "info": self.info}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Hierarchy":
        return cls(data["attribute"], {k: tuple(v) for k, v in data["paths"].items()},
                   {k: np.asarray(v, dtype=np.float32) for k, v in data.get("centroids", {}).items()},
                   dict(data.get("info", {})))
