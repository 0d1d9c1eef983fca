"""The metadata synthesizer's versions in a real Redis: own area beside the mixture's, published by the
refit side, drawn by another process's sink side, hot-swapped on a new version."""
import numpy as np
import pytest

from anonstream.stores import redis_state
from anonstream.synthesis.stream import MetadataSynthesis, SynthesisRefitter

pytestmark = pytest.mark.integration


def corpus(n: int):
    """Texts whose state is given by one cue word among filler words."""
    rng = np.random.default_rng(0)
    cue = {"TX": "rodeo", "CA": "surfing", "NY": "subway"}
    states = [str(s) for s in rng.choice(list(cue), size=n)]
    filler = "policy claim agent premium phone office letter refund".split()
    return [" ".join([cue[s], *rng.choice(filler, size=8)]) for s in states], {"state": states}


class _Chunk:
    def __init__(self, doc_id, text, metadata):
        self.doc_id, self.chunk_index, self.chunk_count, self.text, self.metadata = doc_id, 0, 1, text, metadata


def test_versions_live_in_their_own_area_and_reach_another_process(redis_target, redis_tenant):
    client = redis_target.connect()
    mixture = redis_state.RedisModelRegistry(client, redis_tenant)
    registry = redis_state.RedisModelRegistry(client, redis_tenant, area="synthesis")
    texts, values = corpus(60)
    refitter = SynthesisRefitter(registry, ["state"], 0.05, interval_s=0, min_docs=10)
    refitter.observe([_Chunk(f"d{i}", t, {"state": s}) for i, (t, s) in enumerate(zip(texts, values["state"]))])
    assert refitter.maybe_refit() == 1
    assert mixture.current_version() is None                      # the mixture's pointer is untouched
    sink_side = MetadataSynthesis(redis_state.RedisModelRegistry(redis_target.connect(), redis_tenant,
                                                                 area="synthesis"), ["state"])
    first = sink_side.apply("d0", texts[0], {"state": values["state"][0]})
    assert first["synthesis"]["model_version"] == 1
    assert sink_side.apply("d0", texts[0], {"state": values["state"][0]}) == first
    assert refitter.maybe_refit() == 2
    assert sink_side.apply("d0", texts[0], {"state": values["state"][0]})["synthesis"]["model_version"] == 2
