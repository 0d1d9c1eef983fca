"""Services that load no model import neither torch nor spaCy nor sentence-transformers (issue 27, item 4).

Each case starts a fresh interpreter that imports the service shell and builds the stage on the services'
stores (a Redis client connects at its first command, so no server is needed), then lists the heavy
libraries in ``sys.modules``.
"""
import json
import os
import subprocess
import sys

import pytest

HEAVY = ("torch", "spacy", "sentence_transformers", "transformers", "onnxruntime")

PROBE = """
import json, sys
from anonstream.config import Settings
from anonstream.runtime import service  # what `anonstream service <stage>` imports first
from anonstream.runtime.wiring import build_stage, redis_stores
settings = Settings()
build_stage(sys.argv[1], settings, redis_stores(settings, sys.argv[1]))
print(json.dumps([m for m in %r if m in sys.modules]))
""" % (HEAVY,)


def heavy_imports(stage: str, **env: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, stage], env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("stage", ["ingest", "cluster", "refit", "swap", "sink"])
def test_model_less_service_imports_no_model_library(stage):
    assert heavy_imports(stage) == []


def test_audit_without_utility_sample_imports_no_model_library():
    assert heavy_imports("audit", ANONSTREAM_AUDIT_UTILITY="0") == []


def test_the_probe_sees_a_model_library_when_a_stage_loads_one():
    """The probe can fail: the embed service's build does import the embedding runtime."""
    assert "onnxruntime" in heavy_imports("embed") or "torch" in heavy_imports("embed", ANONSTREAM_EMBED_BACKEND="torch")
