"""A Redis outage is not the records' fault: the driver raises StoreUnavailable for the shell to read the batch
again later, instead of dead-lettering valid records (found by tests/chaos/: a Redis restart mid-stream sent
every chunk the pii stage saw meanwhile to the dead-letter topic)."""
import orjson
import pytest
import redis

from anonstream import topics
from anonstream.pii.keys import KeyRing
from anonstream.stages.base import Emit, InputMessage, Stage, StageDriver
from anonstream.stores.base import StoreUnavailable
from anonstream.stores.redis_pseudonyms import RedisPseudonymStore


class _NeedsStore(Stage):
    """Raises like a stage whose store is down (``per_record``: returns the error per record instead)."""

    name, version, inputs = "needs-store", "1", (topics.DOCUMENTS,)

    def __init__(self, per_record: bool):
        self.per_record = per_record

    def process(self, items):
        if self.per_record:
            return [StoreUnavailable("redis: ConnectionError") for _ in items]
        raise StoreUnavailable("redis: ConnectionError")


def _messages(n: int) -> list[InputMessage]:
    return [InputMessage("t.documents.v1", 0, i, b"k", orjson.dumps({"doc_id": f"d{i}", "text": "A sentence."}))
            for i in range(n)]


@pytest.mark.parametrize("per_record", [False, True])
def test_a_store_outage_raises_instead_of_dead_lettering_valid_records(per_record):
    driver = StageDriver(_NeedsStore(per_record), "t")
    with pytest.raises(StoreUnavailable):
        driver.handle(_messages(3))


def test_invalid_records_are_still_dead_letters_when_the_store_is_fine():
    class _Fine(Stage):
        name, version, inputs = "fine", "1", (topics.DOCUMENTS,)

        def process(self, items):
            return [[Emit(topics.CHUNKS, i["doc_id"], i["doc_id"], {})] for _, i in items]

    handled = StageDriver(_Fine(), "t").handle([InputMessage("t.documents.v1", 0, 0, b"k", b"{not json")])
    assert len(handled.dead_letters) == 1


def test_the_redis_pseudonym_store_reports_an_unreachable_redis_as_store_unavailable():
    client = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=1)
    store = RedisPseudonymStore(client, ttl_s=60, tenant="t", keys=KeyRing.ephemeral())
    with pytest.raises(StoreUnavailable):
        store.surrogate_for("default", "Jane Roe", "PERSON")
