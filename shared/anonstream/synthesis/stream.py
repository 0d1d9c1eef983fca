"""The synthesizer in the stream: refit by the refit job, versioned in a model registry like the mixture,
drawn by the sink (issue 14 item 1).

- ``SynthesisRefitter`` (in the refit stage): keeps the last ``max_docs`` documents it saw complete on the
  embedded-chunk topic (their pii-stage text and their true metadata), and on a schedule refits the chain at
  the configured R on them and publishes it to its own registry (Redis area ``synthesis``; the
  mixture's registry format: ``model:{v}``, ``model:current``). The buffer lives in the process: after a
  restart it refills before the next refit.
- ``MetadataSynthesis`` (in the sink): replaces the configured fields of a reassembled sanitized document by a
  draw from the current version given the document's **released** text, restricted by the consistency rule
  (``consistency.py``), and records ``metadata.synthesis = {fields, model_version, lambda_ratio}``. The draw is
  seeded by the document id and the version, so a redelivered document gets the same values (the sink's
  outputs stay idempotent). Before the first version is published the fields are released as they are and
  ``metadata.synthesis.model_version`` is null, which a consumer must treat as "not protected".

Why the sink: it is the one place that holds the whole released document (the features are the document's
bag of words) and it writes the record consumers read; no chunk topic or schema changes.
"""
from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..stores.base import Fence, ModelRegistry, StaleLeader
from .consistency import allowed_levels
from .model import SequentialSynthesizer

log = logging.getLogger(__name__)


class SynthesisRefitter:
    def __init__(self, registry: ModelRegistry, fields: Sequence[str], lambda_ratio: float, interval_s: float,
                 min_docs: int, max_docs: int = 5000, clock=time.monotonic):
        self.registry = registry
        self.fields = tuple(fields)
        self.lambda_ratio = lambda_ratio
        self.interval_s = interval_s
        self.min_docs = min_docs
        self.max_docs = max_docs
        self.clock = clock
        self.last_fit = clock()
        self.published = 0
        self.rejected = 0
        self._parts: dict[str, dict[int, str]] = {}
        self._docs: OrderedDict[str, tuple[str, tuple[str, ...]]] = OrderedDict()

    def observe(self, chunks: Sequence[Any]) -> None:
        """Chunks (``records.Chunk``); a document counts once all its chunks were seen, with every field."""
        for c in chunks:
            if c.doc_id in self._docs or any((c.metadata or {}).get(f) is None for f in self.fields):
                continue
            parts = self._parts.setdefault(c.doc_id, {})
            parts[c.chunk_index] = c.text
            if len(parts) == c.chunk_count:
                del self._parts[c.doc_id]
                self._docs[c.doc_id] = ("".join(parts[i] for i in sorted(parts)),
                                        tuple(str(c.metadata[f]) for f in self.fields))
                while len(self._docs) > self.max_docs:
                    self._docs.popitem(last=False)

    def maybe_refit(self, fence: Callable[[], Fence | None] | None = None) -> int | None:
        """Fit and publish when the interval has passed and enough documents are there; the new version.
        ``fence``: the refit leader's (stores/lease.py), asked for just before the publish; ``StaleLeader`` when
        this instance no longer leads or the registry refuses it."""
        if self.clock() - self.last_fit < self.interval_s or len(self._docs) < self.min_docs:
            return None
        self.last_fit = self.clock()
        texts = [t for t, _ in self._docs.values()]
        values = {f: [v[j] for _, v in self._docs.values()] for j, f in enumerate(self.fields)}
        try:
            synthesizer = SequentialSynthesizer(self.fields, self.lambda_ratio).fit(texts, values)
        except ValueError as exc:                     # e.g. an empty vocabulary: keep the version in force
            self.rejected += 1
            log.error("refit: synthesis model not published (%s)", type(exc).__name__)
            return None
        info = {"kind": "synthesis", "documents": len(texts), **synthesizer.summary()}
        if fence is None:
            version = self.registry.publish(synthesizer.to_bytes(), info)
        else:
            held = fence()
            if held is None:
                raise StaleLeader("the lease expired during the synthesis fit")
            version = self.registry.publish(synthesizer.to_bytes(), info, fence=held)
        self.published += 1
        log.info("refit: published synthesis version %d (n=%d, R=%g)", version, len(texts), self.lambda_ratio)
        return version


class MetadataSynthesis:
    def __init__(self, registry: ModelRegistry, fields: Sequence[str],
                 surface_forms: Mapping[str, Mapping[str, Sequence[str]]] | None = None):
        self.registry = registry
        self.fields = tuple(fields)
        self.surface_forms = surface_forms
        self._model: tuple[int, SequentialSynthesizer] | None = None

    def _current(self) -> tuple[int, SequentialSynthesizer] | None:
        version = self.registry.current_version()
        if version is None:
            return None
        if self._model is None or self._model[0] != version:
            stored = self.registry.load(version)
            if stored is None:
                return self._model
            self._model = (version, SequentialSynthesizer.from_bytes(stored.model_bytes))
        return self._model

    def apply(self, doc_id: str, text: str, metadata: dict[str, Any]) -> dict[str, Any]:
        """The document's metadata with the fields replaced by one draw (see the module docstring)."""
        current = self._current()
        if current is None:
            return {**metadata, "synthesis": {"fields": list(self.fields), "model_version": None, "lambda_ratio": None}}
        version, synthesizer = current
        levels = {f: lv.tolist() for f, lv in synthesizer.levels().items()}
        seed = int.from_bytes(hashlib.sha256(f"{doc_id}|{version}".encode()).digest()[:8], "big")
        drawn, _ = synthesizer.sample([text], np.random.default_rng(seed),
                                      allowed_levels([text], levels, self.surface_forms))
        return {**metadata, **{f: drawn[f][0] for f in synthesizer.fields},
                "synthesis": {"fields": list(synthesizer.fields), "model_version": version,
                              "lambda_ratio": synthesizer.lambda_ratio}}
