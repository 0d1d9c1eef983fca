"""Versioned hierarchies, one line of versions per category (beside the mixture model's registry,
stores/base.py ``ModelRegistry``): ``publish`` stores a new version and makes it current atomically;
released values never get regeneralized under a newer version (paper 004 digest §9, P1.5)."""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from ..stores.base import Fence, StaleLeader
from .model import Hierarchy


@dataclass(frozen=True)
class HierarchyVersion:
    category: str
    version: int
    hierarchy: Hierarchy


class HierarchyRegistry(ABC):
    @abstractmethod
    def current_version(self, category: str) -> int | None: ...

    @abstractmethod
    def load(self, category: str, version: int | None = None) -> HierarchyVersion | None:
        """The given version (default: the current one), None when absent."""

    @abstractmethod
    def publish(self, category: str, hierarchy: Hierarchy, fence: Fence | None = None) -> int:
        """Store a new version of ``category``'s hierarchy, make it current, return its number; a refit leader's
        ``fence`` (stores/lease.py) is checked atomically with the write (``StaleLeader`` when refused)."""

    @abstractmethod
    def categories(self) -> list[str]: ...


class InMemoryHierarchyRegistry(HierarchyRegistry):
    def __init__(self, keep: int = 5) -> None:
        self._versions: dict[str, dict[int, Hierarchy]] = {}
        self._keep = keep

    def current_version(self, category: str) -> int | None:
        versions = self._versions.get(category)
        return max(versions) if versions else None

    def load(self, category: str, version: int | None = None) -> HierarchyVersion | None:
        version = self.current_version(category) if version is None else version
        hierarchy = self._versions.get(category, {}).get(version) if version is not None else None
        return None if hierarchy is None else HierarchyVersion(category, version, hierarchy)

    def publish(self, category: str, hierarchy: Hierarchy, fence: Fence | None = None) -> int:
        if fence is not None and (fence.verify is None or not fence.verify(fence)):
            raise StaleLeader(f"fencing token {fence.token} refused")
        versions = self._versions.setdefault(category, {})
        version = max(versions, default=0) + 1
        versions[version] = hierarchy
        for old in [v for v in versions if v <= version - self._keep]:
            del versions[old]
        return version

    def categories(self) -> list[str]:
        return sorted(self._versions)
