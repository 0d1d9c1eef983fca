"""embed: attach a unit-norm sentence embedding to the chunks that need one (one encoder call per batch).

A vector serves three readers: the swap stage's partner search (through the cluster stage's component), the
refit stage's reservoir, and the audit's DU sample (eq. 2.17-2.19: log f(x | l, phi) before the release needs the
chunk's cluster). ``needs_vector`` says which chunks need one; the others pass on without an ``embedding`` (the
cluster stage passes them on without a component, the swap stage releases them as before: reason ``no_values``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from .. import topics
from ..records import Chunk
from ..sampling import in_sample, sample_key
from ..swap.tuples import analyze, swappable_slots
from .base import ChunkStage, Emit
from .ingest import chunk_emit

if TYPE_CHECKING:
    from ..embedding import Embedder
    from ..swap.release import Release


def needs_vector(chunk: Chunk, release: Release, others_share: float, utility_share: float) -> bool:
    """Whether ``chunk`` needs an embedding under ``release``:

    * it has swappable values (``swap.tuples.swappable_slots``, the swap stage's own test): it needs a partner;
    * or it is in the hash sample of share ``others_share`` (``sampling.in_sample`` of its ``sample_key``): the
      refit reservoir keeps seeing chunks with nothing to swap too;
    * or the release may change it (it has a mention in clear: the swap stage rewrites nothing else) and it is in
      the audit's DU sample (``utility_share``, the same hash): every changed chunk of that sample keeps its
      cluster, so DU is still estimated on a uniform sample of the changed chunks (``utility_share`` 0: DU off).
    """
    an = analyze(chunk, release)
    if swappable_slots(an, release):
        return True
    key = sample_key(chunk.doc_id, chunk.chunk_index)
    return in_sample(key, others_share) or (utility_share > 0 and bool(an.mentions) and in_sample(key, utility_share))


class EmbedStage(ChunkStage):
    name = "embed"
    version = "2"  # 2: a chunk with nothing to swap may leave without an embedding
    inputs = (topics.CHUNKS_PII,)

    def __init__(self, embedder: Embedder, release: Release | None = None, others_share: float = 1.0,
                 utility_share: float = 0.0):
        """Without ``release`` every chunk is embedded; with one, those ``needs_vector`` selects."""
        self.embedder = embedder
        self.release = release
        self.others_share = others_share
        self.utility_share = utility_share
        self.embedded = 0
        self.skipped = 0

    def metrics(self) -> dict[str, Any]:
        return {"embedded": self.embedded, "skipped": self.skipped}

    def process(self, items: Sequence[tuple[Any, Chunk]]) -> list[list[Emit] | Exception]:
        chunks = [chunk for _, chunk in items]
        wanted = [c for c in chunks if self.release is None
                  or needs_vector(c, self.release, self.others_share, self.utility_share)]
        vectors = self.embedder.encode([c.text for c in wanted])
        for chunk, vector in zip(wanted, vectors):
            chunk.embedding = {"model": self.embedder.model_name, "dim": self.embedder.dim, "vector": vector.tolist()}
        self.embedded += len(wanted)
        self.skipped += len(chunks) - len(wanted)
        out: list[list[Emit] | Exception] = []
        for chunk in chunks:
            chunk.lineage[self.name] = self.version
            out.append([chunk_emit(topics.CHUNKS_EMBEDDED, chunk)])
        return out
