"""The ``hierarchy`` generalizer: a value one step up a stored hierarchy (release spec
``{name: hierarchy, level: 1, path: ...}`` or ``{name: hierarchy, source: redis}``).

The hierarchy is read once (a file written by ``anonstream hierarchy build``, JSON or ARX CSV, when the release
is loaded; or the category's current version in Redis, at the first value once one is published — until then
values get the category label), so one run never mixes versions. A known value
goes to its generalization at ``level``; a value that already is a node's label goes one level above it; an
unseen value is embedded and attached to the nearest level-1 node. A value that would stay the same (a
single-member node) goes further up; the root becomes the category label ``[Category]``.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..generalization import Generalizer
from .model import ROOT, Hierarchy


def load_hierarchy_file(path: str | Path, attribute: str | None = None) -> Hierarchy:
    p = Path(path)
    if p.suffix == ".json":
        return Hierarchy.from_dict(json.loads(p.read_text()))
    return Hierarchy.from_arx_csv(attribute or p.stem, p.read_text())


class HierarchyGeneralizer(Generalizer):
    name = "hierarchy"

    def __init__(self, level: int = 1, path: str | None = None, source: str = "file", category: str | None = None,
                 hierarchy: Hierarchy | None = None):
        if level < 1:
            raise ValueError("hierarchy generalizer level must be >= 1")
        self.level = level
        self.category = category
        if source not in ("file", "redis"):
            raise ValueError("hierarchy generalizer source must be 'file' or 'redis'")
        if source == "redis" and not category:
            raise ValueError("hierarchy generalizer with source: redis needs 'category'")
        if hierarchy is None and source == "file":
            if not path:
                raise ValueError("hierarchy generalizer needs 'path' (or source: redis)")
            hierarchy = load_hierarchy_file(path, category)
        self.source = source
        self.hierarchy = hierarchy
        self._embedder = None

    def _path(self, value: str) -> tuple[tuple[str, ...], int]:
        """The path to generalize along and the level the value sits at."""
        known = self.hierarchy.path(value)
        if known is not None:
            return known, 0
        at = self.hierarchy.level_of(" ".join(value.split()))
        if at is not None:
            return next(p for p in self.hierarchy.paths.values() if p[at] == " ".join(value.split())), at
        return self.hierarchy.attach(value, self._embed(value)), 0

    def _embed(self, value: str):
        from ..embedding import Embedder
        from .builder import embedding_text

        if self._embedder is None:
            # the space the hierarchy was built in, whatever the embed stage runs now
            self._embedder = Embedder.for_space(self.hierarchy.info.get("embedding_model") or "all-MiniLM-L6-v2")
        return self._embedder.encode([embedding_text(value)])[0]

    def generalize(self, value: str, category: str, kind: str | None = None, country: str | None = None) -> str:
        if self.hierarchy is None:
            self.hierarchy = _current_from_redis(self.category or category)
            if self.hierarchy is None:
                return f"[{category}]"
        path, at = self._path(value)
        for level in range(max(self.level, at + 1), len(path)):
            if path[level].casefold() != value.strip().casefold():
                return f"[{category}]" if path[level] == ROOT else path[level]
        return f"[{category}]"


def _current_from_redis(category: str) -> Hierarchy | None:
    from ..config import Settings
    from ..stores.redis_hierarchy import RedisHierarchyRegistry
    from ..stores.redis_state import connect_settings

    settings = Settings()
    stored = RedisHierarchyRegistry(connect_settings(settings), settings.tenant).load(category)
    return None if stored is None else stored.hierarchy
