"""refit: keep a reservoir of recent embeddings and refit the mixture, on a schedule and on drift.

Drift is the drop of the mean log-density (paper 000, eq. 2.1–2.3) of the latest chunks under the
current model, in nats per chunk, against the first chunks that model saw after it went live (held
out from its training data, so the baseline carries no overfitting optimism). A fitted model that
fails its sanity checks (NaN, empty components, ρ outside [0, 1)) is never published. Only chunks with an
embedding reach the reservoir: every chunk with something to swap and a hash sample of the others
(``stages.embed.needs_vector``), so the mixture sees the whole stream, weighted toward the chunks it pairs.

Many instances: every instance feeds the shared reservoir from the partitions it consumes, but only the leader
fits and publishes (``election``: a lease with a fencing token, stores/lease.py). Its mixture publish carries the
fence and is refused by the registry once another instance holds the lease (``StaleLeader``); the synthesizer's
and the hierarchies' publishes (other slots) carry it too and are refused once a newer leader published there. The
standbys keep their drift window current, and one of them takes over when the leader's lease expires or is
released.
"""
from __future__ import annotations

import logging
import time
from collections import deque
from typing import Any, Sequence

import numpy as np

from .. import topics
from ..mixture.model import SphericalMixture
from ..records import Chunk
from ..stores.base import ModelRegistry, Reservoir, StaleLeader
from ..stores.lease import LeaderElection
from .base import ChunkStage, Emit
from .cluster import fit_checked, model_info, model_update_emit

log = logging.getLogger(__name__)


class Refitter:
    def __init__(self, reservoir: Reservoir, registry: ModelRegistry, family: str, k: int, min_weight: float,
                 interval_s: float, min_samples: int, drift_nats: float = 25.0, window: int = 500,
                 clock=time.monotonic, election: LeaderElection | None = None):
        self.reservoir = reservoir
        self.registry = registry
        self.family, self.k, self.min_weight = family, k, min_weight
        self.interval_s = interval_s
        self.min_samples = min_samples
        self.drift_nats = drift_nats
        self.recent: deque[float] = deque(maxlen=window)
        self.baseline: float | None = None
        self.clock = clock
        self.last_fit = clock()
        self.embedding_model = ""
        self.dim: int | None = None  # the width of the current space's vectors (the latest chunks')
        self._model: SphericalMixture | None = None
        self._model_version: int | None = None
        self.published = 0
        self.rejected = 0
        self.election = election  # None: this instance is the only one (in-process runner, tests)
        self.fenced = 0  # publishes the registry refused: this instance had lost the lease meanwhile

    def leads(self) -> bool:
        return self.election is None or self.election.is_leader

    def _current_model(self) -> SphericalMixture | None:
        version = self.registry.current_version()
        if version is not None and version != self._model_version:
            stored = self.registry.load(version)
            if stored is not None:
                self._model, self._model_version = SphericalMixture.from_bytes(stored.model_bytes), version
                self.recent.clear()  # drift is measured against the model in force
                self.baseline = None
        return self._model

    def observe(self, chunks: Sequence[Chunk]) -> None:
        """Feed the reservoir and the drift window with the chunks that carry an embedding (the embed stage's
        ``needs_vector``: those with something to swap and a hash sample of the others)."""
        chunks = [c for c in chunks if c.embedding is not None]
        if not chunks:
            return
        self.embedding_model = chunks[-1].embedding["model"]
        chunks = [c for c in chunks if c.embedding["model"] == self.embedding_model]  # one space per fit
        X = np.asarray([c.embedding["vector"] for c in chunks], dtype=np.float32)
        self.dim = X.shape[1]
        self.reservoir.add(X)
        model = self._current_model()
        if model is not None and X.shape[1] == model.dim:
            self.recent.extend(model.log_density(X).tolist())
            if self.baseline is None and len(self.recent) >= self.min_samples:
                self.baseline = float(np.mean(list(self.recent)[: self.min_samples]))

    def drift(self) -> float | None:
        """Baseline mean log-density minus the mean of the latest ``min_samples`` chunks (nats per
        chunk); None until the baseline exists."""
        if self.baseline is None or len(self.recent) < 2 * self.min_samples:
            return None
        latest = list(self.recent)[-self.min_samples:]
        return self.baseline - float(np.mean(latest))

    def due(self) -> str | None:
        drift = self.drift()
        if drift is not None and drift > self.drift_nats:
            return f"drift {drift:.1f} nats"
        if self.clock() - self.last_fit >= self.interval_s:
            return "scheduled refit"
        return None

    def maybe_refit(self) -> dict[str, Any] | None:
        """Refit and publish when due; return the model-update event or None."""
        if not self.leads():
            return None
        reason = self.due()
        if reason is None:
            return None
        if self.dim is None and (current := self._current_model()) is not None:
            self.dim, self.embedding_model = current.dim, current.embedding_model  # no chunk seen yet: the model's
        try:
            X = self.reservoir.sample(self.dim)  # the rows of the current embedding space only
        except ValueError:
            return None  # rows of two widths and no space known yet: wait for a chunk to tell it
        if len(X) < self.min_samples:
            return None
        self.last_fit = self.clock()
        # A scheduled refit starts from the current model (stable labels); after drift the old
        # components describe the wrong data, so the fit starts afresh.
        warm = None if reason.startswith("drift") else self._current_model()
        try:
            model = fit_checked(X, self.family, self.k, self.min_weight, self.embedding_model, warm)
        except ValueError as exc:
            self.rejected += 1
            log.error("refit: model not published: %s", exc)
            return None
        info = model_info(model, reason)
        if self.election is None:
            version = self.registry.publish(model.to_bytes(), info)
        else:
            fence = self.election.fence()  # asked now, after the fit: the lease may have passed meanwhile
            try:
                if fence is None:
                    raise StaleLeader("the lease expired during the fit")
                version = self.registry.publish(model.to_bytes(), info, fence=fence)
            except StaleLeader as exc:
                self.fenced += 1
                log.warning("refit: model not published, no longer the leader: %s", exc)
                return None
        self.published += 1
        log.info("refit: published model version %d (%s, n=%d, k=%d)", version, reason, len(X), model.k)
        return {**info, "version": version}


class RefitStage(ChunkStage):
    """refit as a stage: every chunk with an embedding feeds the reservoir; ``tick`` refits when due."""

    name = "refit"
    version = "1"
    inputs = (topics.CHUNKS_EMBEDDED,)

    def __init__(self, refitter: Refitter, synthesis=None, hierarchies=None):
        """``synthesis`` (``synthesis.stream.SynthesisRefitter``): also refit the metadata synthesizer;
        ``hierarchies`` (``hierarchy.stream.HierarchyRefitter``): also rebuild the value hierarchies."""
        self.refitter = refitter
        self.synthesis = synthesis
        self.hierarchies = hierarchies


    def process(self, items: Sequence[tuple[Any, Chunk]]) -> list[list[Emit] | Exception]:
        self.refitter.observe([chunk for _, chunk in items])
        if self.synthesis is not None:
            self.synthesis.observe([chunk for _, chunk in items])
        if self.hierarchies is not None:
            self.hierarchies.observe([chunk for _, chunk in items])
        return [[] for _ in items]

    def tick(self, now: float) -> list[Emit]:
        if not self.refitter.leads():  # a standby only feeds the reservoir
            return []
        election = self.refitter.election
        fence = None if election is None else election.fence  # asked for by each publish, just before it
        for part in (self.synthesis, self.hierarchies):
            if part is None:
                continue
            try:
                part.maybe_refit(fence=fence)
            except StaleLeader as exc:
                self.refitter.fenced += 1
                log.warning("refit: %s not published, no longer the leader: %s", type(part).__name__, exc)
        event = self.refitter.maybe_refit()
        return [] if event is None else [model_update_emit(event)]

    def metrics(self) -> dict[str, Any]:
        drift = self.refitter.drift()
        numbers = {"reservoir_seen": self.refitter.reservoir.seen(), "published": self.refitter.published,
                   "rejected": self.refitter.rejected, "drift_nats": None if drift is None else round(drift, 2)}
        election = self.refitter.election
        if election is not None:
            numbers.update(leader=int(election.is_leader), leader_token=election.token or 0,
                           leader_acquired=election.acquired, leader_lost=election.lost, fenced=self.refitter.fenced)
        return numbers

    def start(self) -> None:
        if self.refitter.election is not None:
            self.refitter.election.start()

    def close(self) -> None:
        """Shutdown: release the lease, so that a standby takes over without waiting for it to expire."""
        if self.refitter.election is not None:
            self.refitter.election.stop()
