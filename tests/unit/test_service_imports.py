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
from anonstream import cli
from anonstream.runtime import service  # what `anonstream service <stage>` imports first
from anonstream.runtime.wiring import build_stage, redis_stores
cli.parse_args(["service", sys.argv[1]])  # and its command line
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


# --- while processing records -----------------------------------------------------------------------------------
# The stage cores import some libraries only at their first record (ingest and swap split sentences; the audit
# scores utility; refit fits): the build alone does not show them. One child runs the embedded pipeline on a few
# TAB documents and keeps each stage's input records; then, per stage that loads no model, a fresh child imports
# the service shell, builds the stage core (in-process stores: no Redis needed), processes those records through
# the services' StageDriver, ticks an hour later (swap's and the sink's waits expire) and lists what it imported.

CAPTURE = """
import pickle, sys, time
from pathlib import Path
from anonstream.config import Settings
from anonstream.runtime.embedded import EmbeddedPipeline
from anonstream.runtime.wiring import build_stages, in_memory_stores
settings = Settings()
pipeline = EmbeddedPipeline(build_stages(settings, in_memory_stores(settings)), settings.topic_prefix)
inputs = {}
for driver in pipeline.drivers:
    def handle(messages, original=driver.handle, name=driver.stage.name):
        inputs.setdefault(name, []).append([(m.topic, m.key, m.value) for m in messages])
        return original(messages)
    driver.handle = handle
lines = Path(sys.argv[1]).read_text().splitlines()[:int(sys.argv[2])]
pipeline.run_batch([(str(i), line.encode()) for i, line in enumerate(lines)])
pipeline.tick(time.time() + 3600)
pipeline.finish()
Path(sys.argv[3]).write_bytes(pickle.dumps(inputs))
"""

REPLAY = """
import json, pickle, sys, time
from pathlib import Path
from anonstream.config import Settings
from anonstream import cli
from anonstream.runtime import service  # what `anonstream service <stage>` imports first
from anonstream.runtime.wiring import build_stage, in_memory_stores
cli.parse_args(["service", sys.argv[1]])  # and its command line
from anonstream.stages.base import InputMessage, StageDriver
settings = Settings()
stores = in_memory_stores(settings)
inputs = pickle.loads(Path(sys.argv[2]).read_bytes())
# the cluster assigns with a model: refit fits one into the same (in-process) registry first
names = ["refit", "cluster"] if sys.argv[1] == "cluster" else [sys.argv[1]]
emitted = 0
for name in names:
    driver = StageDriver(build_stage(name, settings, stores), settings.topic_prefix)
    for n, batch in enumerate(inputs[name]):
        handled = driver.handle([InputMessage(t, 0, n * 100000 + i, k, v) for i, (t, k, v) in enumerate(batch)])
        assert not handled.dead_letters, handled.dead_letters[:1]
        emitted += len(handled.emits) + len(driver.tick(time.time()))
    emitted += len(driver.tick(time.time() + 3600))
print(json.dumps({"emitted": emitted, "modules": sorted(m for m in sys.modules if m.split(".")[0] in
                  ("torch", "spacy", "thinc", "transformers", "sentence_transformers", "onnxruntime", "anonstream"))}))
"""

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "data", "sample", "tab-train-100.jsonl")
# every chunk embedded (so all reach the refit reservoir), a fit at every tick from 8 chunks on
SMALL_RUN = {"ANONSTREAM_EMBED_OTHERS": "1", "ANONSTREAM_REFIT_INTERVAL_S": "0", "ANONSTREAM_REFIT_MIN_SAMPLES": "8",
             "ANONSTREAM_MIXTURE_K": "2"}


@pytest.fixture(scope="module")
def stage_inputs(tmp_path_factory):
    path = tmp_path_factory.mktemp("stage-inputs") / "inputs.pickle"
    done = subprocess.run([sys.executable, "-c", CAPTURE, SAMPLE, "4", str(path)], env={**os.environ, **SMALL_RUN},
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return path


@pytest.mark.slow  # ~30 s: the capture runs every stage, spaCy and the encoder included
@pytest.mark.parametrize("stage, env", [("ingest", {}), ("cluster", {}), ("refit", {}), ("swap", {}), ("sink", {}),
                                        ("audit", {"ANONSTREAM_AUDIT_UTILITY": "0"})])
def test_model_less_stage_core_imports_no_model_library_while_processing_records(stage_inputs, stage, env):
    done = subprocess.run([sys.executable, "-c", REPLAY, stage, str(stage_inputs)],
                          env={**os.environ, **SMALL_RUN, **env}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["emitted"] > 0  # refit emits only model updates: it fitted one
    assert [m for m in result["modules"] if not m.startswith("anonstream")] == []
    if stage in ("ingest", "swap"):  # the records took the path that split sentences (it imported spaCy before)
        assert "anonstream.sentencizer" in result["modules"]


def test_the_service_command_line_imports_no_other_command():
    """`anonstream service <stage>` builds its own sub-command only: the other commands' modules import scipy and
    scikit-learn (~90 MiB in every service process)."""
    probe = ("import json, sys; from anonstream import cli; args = cli.parse_args(['--log-level', 'INFO', 'service', "
             "'sink']); assert args.name == 'sink'; print(json.dumps(sorted(m for m in sys.modules if m in "
             "('sklearn', 'scipy') or m in cli.COMMAND_MODULES)))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == []
