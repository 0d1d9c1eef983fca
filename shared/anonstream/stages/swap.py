"""swap: named-entity swapping between similar chunks of different documents (paper 000), with
generalization or suppression as the fallback where no partner comes within the wait bound.

The pairing logic is ``swap.SwapProcessor``; this stage only maps it onto the stage contract:
``process`` offers chunks, ``tick`` applies the wait bound, ``drain`` releases everything at the end
of an embedded run. Outputs that consumed pooled chunks sit in the processor's outbox until the
shell reports them produced (``after_produced`` → ``ack``).

At-least-once: after a restart, the first batch re-emits the whole outbox (``recover``), a duplicate at worst.
Exactly-once (``exactly_once``; the service shell's transactions, runtime/transactions.py): each input partition
has its own outbox and every entry names the transaction that carries it (``swap/pairing.py``). A batch first
asks for the outputs stashed for its records (``owed``: a record read again because its transaction did not
commit gets them again); the wait bound releases only pooled chunks of owned partitions, bound to a transaction
of that partition (``bound_tick``); a newly assigned partition is resolved against its committed offset before
anything else (``assigned``).
The swap log (pair ids, old and new values) goes to the restricted swap-log topic only.
"""
from __future__ import annotations

from typing import Any, Sequence

from .. import topics
from ..records import Chunk
from ..swap import SwapOutput, SwapProcessor
from ..swap.pairing import box_of
from .base import ChunkStage, Emit
from .ingest import chunk_emit

PENDING_MAX = 10_000
Bound = dict[tuple[str, int], list[tuple[list[Emit], str]]]


class SwapStage(ChunkStage):
    name = "swap"
    version = "1"
    inputs = (topics.CHUNKS_CLUSTERED,)

    def __init__(self, processor: SwapProcessor, exactly_once: bool = False):
        self.processor = processor
        self.exactly_once = exactly_once
        # id(first emit of an output) -> (that emit, outbox, tokens): acknowledged when that emit is produced
        self._pending: dict[int, tuple[Emit, str, list[str]]] = {}
        self._recovered = False
        self.counts: dict[str, int] = {}

    def _emits(self, out: SwapOutput) -> list[Emit]:
        released_tuples = {record["chunk_key"]: record["tuple_after"] for record in out.log}
        emits = []
        for chunk in out.chunks:
            chunk.entity_tuple = released_tuples.get(chunk.key)  # released values only, never the originals
            chunk.embedding = None  # the sanitized topic carries no embeddings
            chunk.lineage[self.name] = f"{self.version}+{self.processor.release.version}"
            emits.append(chunk_emit(topics.CHUNKS_SANITIZED, chunk))
        for record in out.log:
            action = record.get("action", "unknown")
            self.counts[action] = self.counts.get(action, 0) + 1
            emits.append(Emit(topics.SWAP_LOG, f"{record['chunk_key']}|log", record["doc_id"], record))
        if out.tokens and emits:
            self._pending[id(emits[0])] = (emits[0], out.box, list(out.tokens))
        return emits

    def process(self, items: Sequence[tuple[Any, Chunk]]) -> list[list[Emit] | Exception]:
        return self.process_sourced(items, None)

    def process_sourced(self, items: Sequence[tuple[Any, Chunk]],
                        sources: Sequence[tuple[str, int, int]] | None) -> list[list[Emit] | Exception]:
        if self.exactly_once and sources is not None:
            return self._process_exactly_once(items, sources)
        recovered: list[Emit] = []
        if not self._recovered:  # outputs of claims that never reached the broker before a crash
            self._recovered = True
            recovered = self._emits(self.processor.recover())
        results: list[list[Emit] | Exception] = []
        for _, chunk in items:
            results.append(recovered + self._emits(self.processor.offer(chunk)))
            recovered = []
        return results

    def _process_exactly_once(self, items, sources) -> list[list[Emit] | Exception]:
        owed = {box: self.processor.owed(box) for box in {box_of(t, p) for t, p, _ in sources}}
        results: list[list[Emit] | Exception] = []
        for (_, chunk), (topic, partition, offset) in zip(items, sources):
            again = owed[box_of(topic, partition)].pop(offset, None)  # stashed by an earlier, uncommitted attempt
            emits = self._emits(again) if again is not None else []
            results.append(emits + self._emits(self.processor.offer(chunk, (topic, partition, offset))))
        return results

    def tick(self, now: float) -> list[Emit]:
        if self.exactly_once:
            return []  # bound_tick
        return self._emits(self.processor.expire(now))

    def bound_tick(self, now: float, owned: dict[tuple[str, int], int]) -> Bound:
        """Exactly-once: the wait bound for the pooled chunks of ``owned`` partitions ((topic, partition) →
        committed offset); per partition, outputs and the metadata of the transaction (same offset) carrying them."""
        if not self.exactly_once:
            return {}
        boxes = {box_of(t, p): (t, p) for t, p in owned}
        released = self.processor.expire_owned(now, {box_of(t, p): c for (t, p), c in owned.items()})
        return {boxes[box]: [(self._emits(out), k)] for box, (out, k) in released.items()}

    def assigned(self, committed: dict[tuple[str, int], tuple[int | None, str]]) -> Bound:
        """Exactly-once: newly owned partitions ((topic, partition) → committed offset and metadata), resolved before
        this instance commits anything for them: outputs to commit again, per metadata."""
        if not self.exactly_once:
            return {}
        out: Bound = {}
        for (topic, partition), (offset, metadata) in committed.items():
            again = self.processor.resolve(box_of(topic, partition), offset, metadata)
            if again:
                out[(topic, partition)] = [(self._emits(released), k) for released, k in again]
        return out

    def drain(self) -> list[Emit]:
        return self._emits(self.processor.drain())

    def after_produced(self, emits: Sequence[Emit]) -> None:
        produced = [id(e) for e in emits if id(e) in self._pending and self._pending[id(e)][0] is e]
        for key in produced:  # a StoreUnavailable here: the shell calls again with the same emits
            _, box, tokens = self._pending[key]
            self.processor.ack(tokens, box)
        for key in produced:
            del self._pending[key]
        # entries of an attempt whose outputs were dropped (its batch is read again) stay in the outbox; their
        # references here are garbage, kept bounded
        while len(self._pending) > PENDING_MAX:
            del self._pending[next(iter(self._pending))]

    def metrics(self) -> dict[str, Any]:
        return {"released_by_action": dict(self.counts), "release_version": self.processor.release.version}
