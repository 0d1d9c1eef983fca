"""The synthesizer in the stream: the refit stage fits and versions it, the sink replaces the fields by a
draw of the current version (deterministic per document and version), the portable model format."""
from __future__ import annotations

import numpy as np

from anonstream.records import Chunk
from anonstream.stages.sink import SinkStage
from anonstream.stores.base import InMemoryModelRegistry, InMemoryPendingChunks
from anonstream.synthesis.model import SequentialSynthesizer
from anonstream.synthesis.stream import MetadataSynthesis, SynthesisRefitter

from test_synthesis_model import STATES, corpus


def chunks(doc_id: str, text: str, metadata: dict) -> list[Chunk]:
    words = text.split(" ")
    parts = [" ".join(words[:5]) + " ", " ".join(words[5:])]
    return [Chunk(doc_id, i, 2, t, 0, 1, metadata, entities=[], cluster=None, changes=[],
                  lineage={"ingest": "1", "swap": "0"}) for i, t in enumerate(parts)]


def test_portable_model_gives_the_same_predictive():
    texts, values = corpus()
    fitted = SequentialSynthesizer(("state", "tier"), 0.05).fit(texts, values)
    loaded = SequentialSynthesizer.from_bytes(fitted.to_bytes())
    _, p1 = fitted.sample(texts, np.random.default_rng(0))
    _, p2 = loaded.sample(texts, np.random.default_rng(0))
    assert all(np.allclose(p1[f], p2[f]) for f in ("state", "tier"))


def test_refit_publishes_a_version_and_the_sink_draws_from_it():
    texts, values = corpus(80)
    registry = InMemoryModelRegistry()
    now = [0.0]
    refitter = SynthesisRefitter(registry, ["state"], 0.05, interval_s=60, min_docs=50, clock=lambda: now[0])
    docs = [chunks(f"d{i}", t, {"state": s, "source": "x"}) for i, (t, s) in enumerate(zip(texts, values["state"]))]
    for doc in docs[:40]:
        refitter.observe(doc)
    now[0] = 61.0
    assert refitter.maybe_refit() is None                  # 40 < min_docs
    for doc in docs[40:]:
        refitter.observe(doc[:1])                           # half a document is not a document
    assert refitter.maybe_refit() is None
    for doc in docs[40:]:
        refitter.observe(doc[1:])
    assert refitter.maybe_refit() == 1 and registry.current_version() == 1

    sink = SinkStage(InMemoryPendingChunks(), synthesis=MetadataSynthesis(registry, ["state"]))
    out = [sink.process([(None, c) for c in doc])[-1][0].value for doc in docs]
    assert all(v["metadata"]["synthesis"] == {"fields": ["state"], "model_version": 1, "lambda_ratio": 0.05}
               for v in out)
    assert all(v["metadata"]["source"] == "x" and v["metadata"]["state"] in STATES for v in out)
    agreement = np.mean([v["metadata"]["state"] == s for v, s in zip(out, values["state"])])
    assert agreement >= 0.85                               # small R follows the text
    again = MetadataSynthesis(registry, ["state"]).apply("d0", out[0]["text"], {"state": values["state"][0]})
    assert again["state"] == out[0]["metadata"]["state"]  # a redelivered document gets the same draw


def test_sink_before_any_version_marks_the_fields_unprotected():
    synthesis = MetadataSynthesis(InMemoryModelRegistry(), ["state"])
    assert synthesis.apply("d", "text", {"state": "TX"}) == {
        "state": "TX", "synthesis": {"fields": ["state"], "model_version": None, "lambda_ratio": None}}
