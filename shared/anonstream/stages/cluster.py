"""cluster: assign each chunk to a component of the current spherical mixture (paper 000 §2.2).

The model comes from a ``ModelRegistry``; the stage checks the current version on every batch and
hot-swaps when it changed. After a hot swap each chunk also gets its component under the previous version
(``cluster.previous``), so the swap stage can still pair it with chunks that wait in the old version's pools. With no model yet it fits a bootstrap model on the batch and publishes
it. When the registry cannot be reached it keeps assigning with its cached model and counts the
batches it did so (``registry_unavailable``), for the service's metrics. A chunk the embed stage left without a
vector (``stages.embed.needs_vector``) passes on without a component.

A mixture lives in one embedding space: the one its ``embedding_model`` names (``embedding.space_name``: the
model, and the static table when ``ANONSTREAM_EMBED_BACKEND=static``). When the chunks arrive in another space than
the model in force (the embed service was switched to another backend), the stage bootstraps a new version on
the new space's chunks instead of assigning them with a model of the old one, and gives the chunks of the
previous version no handover component; a chunk of a space other than its batch's latest loses its vector and
passes on without a component (``foreign_space``), as a chunk the embed stage did not embed. A model with no recorded space (versions written
before spaces were recorded) is taken to be in the chunks' space.
"""
from __future__ import annotations

import logging
from typing import Any, Sequence

import numpy as np

from .. import topics
from ..mixture.em import fit_mixture
from ..mixture.model import SphericalMixture
from ..records import Chunk
from ..stores.base import ModelRegistry, StoreUnavailable
from .base import ChunkStage, Emit
from .ingest import chunk_emit

log = logging.getLogger(__name__)


def model_info(model: SphericalMixture, reason: str) -> dict[str, Any]:
    """The registry/model-update description of a model (schemas/model-update.v1.json)."""
    return {
        "family": model.family.value,
        "k": int(model.k),
        "d": int(model.dim),
        "n_train": int(model.n_train),
        "train_loglik": float(model.train_loglik),
        "created_at": float(model.created_at),
        "embedding_model": model.embedding_model,
        "reason": reason,
    }


def fit_checked(X: np.ndarray, family: str, k: int, min_weight: float, embedding_model: str,
                warm_start: SphericalMixture | None = None) -> SphericalMixture:
    """Fit with K capped by the data (at least 4 points per component), warm-started from the
    current model when it has that K; raise if the result fails its sanity checks, so a broken
    model is never published."""
    k = max(1, min(k, len(X) // 4))
    usable = warm_start is not None and warm_start.k == k and warm_start.family.value == family
    init = warm_start if usable else "kmeans++"
    model = fit_mixture(X, family, k, min_weight=min_weight, init=init, embedding_model=embedding_model)
    errors = model.sanity_errors()
    if errors:
        raise ValueError(f"fitted model failed sanity checks: {errors}")
    return model


def same_space(model: SphericalMixture, space: str) -> bool:
    """Whether ``model`` was fitted in embedding space ``space`` (a model that records none is taken to be)."""
    return not model.embedding_model or model.embedding_model == space


def model_update_emit(event: dict[str, Any]) -> Emit:
    key = f"model|{event['version']}"
    return Emit(topics.MODEL_UPDATES, key, key, event)


class ClusterStage(ChunkStage):
    name = "cluster"
    version = "3"  # 2: a chunk without an embedding passes on without a cluster; 3: one embedding space per model
    inputs = (topics.CHUNKS_EMBEDDED,)

    def __init__(self, registry: ModelRegistry, family: str = "pkb", k: int = 8, min_weight: float = 1e-3):
        self.registry = registry
        self.family = family
        self.k = k
        self.min_weight = min_weight
        self.model: SphericalMixture | None = None
        self.model_version: int | None = None
        self.registry_unavailable = 0
        self.hot_swaps = 0
        self.previous: tuple[SphericalMixture, int] | None = None  # the model before the last hot swap
        self.foreign_space = 0  # chunks passed on without a component: not in their batch's embedding space
        self.space_changes = 0  # bootstraps because the model in force was in another embedding space

    def metrics(self) -> dict[str, Any]:
        return {"model_version": self.model_version, "hot_swaps": self.hot_swaps,
                "registry_unavailable": self.registry_unavailable, "foreign_space": self.foreign_space,
                "space_changes": self.space_changes}

    def refresh(self) -> None:
        """Load the registry's current version if it is newer than ours (hot swap)."""
        try:
            current = self.registry.current_version()
            if current is not None and current != self.model_version:
                stored = self.registry.load(current)
                if stored is not None:
                    if self.model is not None:
                        self.previous = (self.model, self.model_version)
                    else:
                        self.previous = self._load_previous(current)
                    self.model = SphericalMixture.from_bytes(stored.model_bytes)
                    self.model_version = current
                    self.hot_swaps += 1
                    log.info("cluster: now on model version %d (k=%d)", current, self.model.k)
        except StoreUnavailable:
            self.registry_unavailable += 1
            if self.model is None:
                raise
            log.warning("cluster: model registry unreachable, keeping version %s", self.model_version)

    def process(self, items: Sequence[tuple[Any, Chunk]]) -> list[list[Emit] | Exception]:
        chunks = [chunk for _, chunk in items]
        embedded = [c for c in chunks if c.embedding is not None]
        updates = self._assign(embedded) if embedded else []
        out: list[list[Emit] | Exception] = []
        for chunk in chunks:
            chunk.lineage[self.name] = self.version
            out.append([chunk_emit(topics.CHUNKS_CLUSTERED, chunk)])
        out[0][:0] = updates
        return out

    def _assign(self, chunks: list[Chunk]) -> list[Emit]:
        """Put each chunk's component on it (bootstrapping a model first when there is none, or when the model in
        force is in another embedding space than the batch's latest chunk); the model updates."""
        space = chunks[-1].embedding["model"]
        foreign = sum(c.embedding["model"] != space for c in chunks)
        if foreign:
            self.foreign_space += foreign
            for chunk in chunks:
                if chunk.embedding["model"] != space:
                    chunk.embedding = None
            chunks = [c for c in chunks if c.embedding is not None]
        X = np.asarray([c.embedding["vector"] for c in chunks], dtype=np.float32)
        self.refresh()
        if self.model is not None and not same_space(self.model, space):
            log.warning("cluster: model version %s is in embedding space %r, the chunks in %r: bootstrapping a "
                        "version in theirs", self.model_version, self.model.embedding_model, space)
            self.model, self.previous = None, None
            self.space_changes += 1
        updates = [] if self.model is not None else [self._bootstrap(X, space)]
        if X.shape[1] != self.model.dim:
            raise ValueError(f"embedding dim {X.shape[1]} != model dim {self.model.dim}")
        labels, posterior, log_density = self.model.assign(X)
        previous = None
        if self.previous is not None and self.previous[0].dim == X.shape[1] and same_space(self.previous[0], space):
            previous = self.previous[0].assign(X)[0]
        for i, (chunk, label, p, ld) in enumerate(zip(chunks, labels, posterior, log_density)):
            chunk.cluster = {"model_version": self.model_version, "component": int(label),
                             "posterior": float(p), "log_density": float(ld)}
            if previous is not None:
                chunk.cluster["previous"] = {"model_version": self.previous[1], "component": int(previous[i])}
        return updates

    def _load_previous(self, current: int) -> tuple[SphericalMixture, int] | None:
        """At start-up, the version before ``current`` if the registry still keeps it (a restart right after a
        refit must not strand the old pools either)."""
        stored = self.registry.load(current - 1) if current > 1 else None
        return None if stored is None else (SphericalMixture.from_bytes(stored.model_bytes), current - 1)

    def _bootstrap(self, X: np.ndarray, embedding_model: str) -> Emit:
        model = fit_checked(X, self.family, self.k, self.min_weight, embedding_model)
        info = model_info(model, "bootstrap")
        self.model_version = self.registry.publish(model.to_bytes(), info)
        self.model = model
        log.info("cluster: bootstrapped model version %d on %d chunks", self.model_version, len(X))
        return model_update_emit({**info, "version": self.model_version})
