"""Streaming named-entity swapping: the pure core of the swap stage (paper 000, §2.1-2.3, on a stream).

The paper swaps in a batch: pick a valid pair uniformly inside a cluster, swap, repeat (§2.2.1,
§3.2.1), which reaches ~4% of the chunks, and names that as its limitation (§4). Here every chunk
passes through ``SwapProcessor.offer`` once and leaves with a decision:

1. Its tuple on the swapped categories J (the S categories) is counted (``TupleCounts``). It is
   **rare** when that count, itself included, is below ``release.rare_k`` (k = 2: unique so far,
   the sample uniques s_1 of §2.4.3 that drive the risk measure DR, eq. 2.16). A chunk with no value
   on J has nothing to swap and is released at once (C/G operators still apply).
2. Rare chunks always want a partner; other chunks want one with probability r (the swap rate of
   eq. 2.4); with ``release.donors`` a chunk that does not want one may still serve as the partner of
   a *waiting rare* chunk. With ``protect: all`` (default) a chunk that wants no partner gets the fallback
   at once: every value the pii stage decided to mask leaves changed.
3. A partner is **valid** (§2.1, §2.3 constraints C) when it waits in the same pool (same cluster:
   mixture model version and component; right after a refit also the pool of the chunk's component under
   the previous version, so the chunks waiting there are not stranded), comes from a different document,
   differs on at least one unswapped category (as released, i.e. after C/G operators; otherwise the swap
   is a re-indexing), and shares at least one *slot* with a different value. A slot is a kind of thing
   (``EntitySpan.kind``: a court, a city, a nationality): values only move between mentions of one kind.
   Among valid partners, rare ones go first; then those sharing the most slots; then those with the same
   slots and entity counts (the paper's remedy for mismatched entity counts, §3.2.3); inside that class the
   choice is uniform (§2.2.1).
4. With a partner, both chunks get each other's values on the slots they share (``rewrite.plan_swap``)
   and both leave; a protected chunk's other slots get the fallback. Without one, a chunk that wants one
   waits in its pool; it leaves when a later chunk pairs with it, when it has waited
   ``pool.max_wait_seconds`` (``expire``), when it is the oldest of a full pool (``pool.max_size``), or at
   end of input (``drain``). Then a protected chunk (rare, or any with ``protect: all``) gets the
   **fallback** on its J values (``generalize``: the category's generalizer, a placeholder where it cannot
   coarsen; or ``suppress``: placeholders); with ``protect: rare`` a non-rare one leaves as is.
5. An entity changed in one released chunk keeps that value in every later chunk of its document
   (``ReplacementMemory``, first writer wins), whatever that chunk's partner offers: coreference is kept.

Every released chunk also gets the release-wide operators (C: placeholder, G: generalizer; DIRECT
identifiers still in clear: placeholder), its ``changes`` (offsets into the new text), the release
echo, and no embedding (the sanitized topic does not carry embeddings). Each released chunk has
exactly one swap-log record (schemas/swap-log.v1.json; restricted topic): action, reason, pair id
and partner, tuples before/after, the changes with old values. Sanitized records never name the
partner: the pair id and the partner's document live only in the log.

Restart safety: outputs that consume pooled chunks are stashed atomically with the claim (``PoolStore.claim``)
in an outbox until ``ack``; the pool store ignores redeliveries of chunks that are pending or done; counts are
idempotent per chunk. At-least-once (no ``source`` given): one shared outbox, and ``recover()`` hands all of it
back after a restart (a duplicate at worst).

Exactly-once (the service shell runs one Kafka transaction per input partition, whose commit carries the
partition's consumer offset and a metadata string): every output is resolvable by Kafka's own outcome.
* ``offer(chunk, source=(topic, partition, offset))``: a claim made while handling that input record goes to the
  partition's outbox under a token naming the offset (``i:{offset}:...``); the output rides in the transaction
  that commits the offset past it. If that transaction never commits, the record is read again, by this instance
  or the partition's next owner; the pooled chunks it consumed are done by then, so ``owed(box)`` hands the stashed
  outputs back to be emitted again with that record (``SwapStage`` does so at the start of each batch).
* ``expire_owned(now, owned)``: the wait bound, only for pooled chunks whose input partition this instance owns;
  the claims of one partition go under ``t:{c}:{k}:...`` (c: the partition's committed offset, k: a fresh id) and
  ride in a transaction that commits offset c again with metadata k.
* ``resolve(box, committed, metadata)``: the partition's new owner, after its producer fenced the old one and
  before its own first commit, reads the committed offset C and metadata m: an ``i:o`` entry with o < C and a
  ``t:c:k`` entry with c < C, or c = C and m = k, were committed (forget them); other ``t`` entries are handed back,
  per k, to be committed again with offset C and metadata k; other ``i`` entries wait for their record.
No instance re-emits the outputs of a partition it does not own, and none re-emits a committed one.
"""
from __future__ import annotations

import bisect
import random
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from .. import serde
from ..records import Chunk
from ..segment import split_sentences
from . import rewrite
from .generalize import Generalizer
from .release import CATEGORIES, Release
from .stores import InMemoryReplacementMemory, PoolEntry, PoolStore, ReplacementMemory, TupleCounts
from .tuples import (Analysis, Mention, Site, analyze, country_of_slot, digest_of, kind_of_slot, norm_key,
                     swappable_slots)

LOG_SCHEMA = "swap-log.v1"
ACTIONS = ("swapped", "generalized", "suppressed", "untouched")


@dataclass(slots=True)
class SwapOutput:
    """Released chunks (in release order), one swap-log record per chunk, and the outbox tokens to
    acknowledge (``SwapProcessor.ack``) once the records are on the broker."""

    chunks: list[Chunk] = field(default_factory=list)
    log: list[dict[str, Any]] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    box: str = ""  # the outbox the tokens are in

    def extend(self, other: "SwapOutput") -> "SwapOutput":
        if other.tokens:
            if self.tokens and self.box != other.box:
                raise ValueError("one output's tokens are in one outbox")
            self.box = other.box
        self.chunks.extend(other.chunks)
        self.log.extend(other.log)
        self.tokens.extend(other.tokens)
        return self

    def to_payload(self) -> dict[str, Any]:
        return {"chunks": [c.to_wire() for c in self.chunks], "log": self.log}

    @classmethod
    def from_payload(cls, payload: dict[str, Any], token: str | None = None, box: str = "") -> "SwapOutput":
        return cls([Chunk.from_wire(c) for c in payload["chunks"]], list(payload["log"]),
                   [token] if token else [], box)

    def __len__(self) -> int:
        return len(self.chunks)


def pool_of(chunk: Chunk) -> str:
    """Pool key: the cluster (model version, component); chunks without a cluster share one pool."""
    cluster = chunk.cluster
    if not cluster:
        return "unclustered"
    return f"v{cluster['model_version']}:c{cluster['component']}"


def handover_pool_of(chunk: Chunk) -> str | None:
    """The pool of the chunk's component under the previous model version, when the cluster stage gave one
    (``cluster.previous``, right after a refit): chunks still waiting there are in the same cluster as this
    one by the model they were assigned with, so they remain valid partners instead of waiting out T."""
    previous = (chunk.cluster or {}).get("previous")
    if not previous:
        return None
    return f"v{previous['model_version']}:c{previous['component']}"


@dataclass(slots=True)
class _Offer:
    chunk: Chunk
    analysis: Analysis
    entry: PoolEntry
    wants: bool  # rare or selected


class Releaser:
    """Turns one chunk and a decision into the released chunk and its swap-log record; shared by
    the streaming processor and the batch procedure (one code path for the rewrite). With a
    ``memory``, an entity changed in an earlier released chunk of the same document gets the same value
    again (coreference kept), whatever this chunk's partner offers."""

    def __init__(self, release: Release, clock: Callable[[], float] = time.time,
                 memory: ReplacementMemory | None = None):
        self.release = release
        self.clock = clock
        self.memory = memory if memory is not None else InMemoryReplacementMemory()
        self._echo = release.to_echo()

    def u_digest(self, an: Analysis) -> str:
        """Digest of the values on the unswapped categories as they will be released."""
        release = self.release
        keys: dict[str, list[str]] = {}
        for c in release.unswapped:
            values = an.values.get(c)
            if not values:
                continue
            status = release.status(c)
            if status == "C":
                keys[c] = [norm_key(release.placeholder(c))]
            elif status == "G":
                gen = release.generalizer(c)
                keys[c] = [norm_key(gen.generalize(v, c)) for v in values]
            else:
                keys[c] = an.keys[c]
        return digest_of(keys)

    def fallback_fn(self, category: str, policy: str, kind: str | None = None,
                    country: str | None = None) -> Callable[..., tuple[str, str]]:
        """What a value becomes when no partner gives it one: (new value, operator). ``before``, the text before
        the value, lets the generalizer fit its words (``Generalizer.in_context``: "Austria, [Vienna]" → "Austria,
        a city", never "Austria, Austria")."""
        placeholder = self.release.placeholder(category)
        if policy == "suppress":
            return lambda v, before="", after="": (placeholder, rewrite.OP_SUPPRESS)
        gen = self.release.generalizer(category)

        def fn(v: str, before: str = "", after: str = "") -> tuple[str, str]:
            g = gen.in_context(before, v, gen.generalize(v, category, kind, country), after)
            if norm_key(g) == norm_key(v):  # could not coarsen: a placeholder protects it
                return placeholder, rewrite.OP_SUPPRESS
            return g, rewrite.OP_GENERALIZE

        return fn

    def finalize(self, chunk: Chunk, an: Analysis, swap: dict[str, list[str]] | None = None,
                 fallback: str | None = None) -> tuple[Chunk, list[dict[str, Any]]]:
        """Rewrite one chunk: on the swapped categories each slot gets the partner's values (``swap``: slot
        → values) or, for slots the partner has none of, the fallback; entities the document's memory holds
        keep their earlier value; release-wide C/G operators; DIRECT identifiers in clear suppressed. Returns
        the released chunk and its changes with ``old`` (for the log only)."""
        release = self.release
        remembered = {ref: _unpack(v) for ref, v in self.memory.recall(chunk.doc_id).items()}
        assigned: dict[str, str] = {}  # ref -> (operator, value) packed, for the memory
        plans: list[rewrite.SitePlan] = []
        by_slot: dict[str, list] = {}
        for site in an.sites:
            if site.direct:
                placeholder = release.placeholder(site.category)
                plans += rewrite.plan_map([site], lambda v, p=placeholder: p, rewrite.OP_SUPPRESS)
            else:
                by_slot.setdefault(site.slot, []).append(site)
        for slot, sites in by_slot.items():
            category = sites[0].category
            status = release.status(category)
            refs = {m.ref for site in sites for m in site.mentions}
            fixed_ops = {r: ov for r, ov in remembered.items() if r in refs} if status == "S" else {}
            fixed = {r: value for r, (_, value) in fixed_ops.items()}
            if status == "S" and not release.swaps_slot(kind_of_slot(slot)):  # kind unknown: generalized, never swapped
                fn = self.fallback_fn(category, "generalize", kind_of_slot(slot), country_of_slot(slot))
                for site in sites:
                    mapped = {m.value: fn(m.value, _before(chunk.text, m.start), _after(chunk.text, m.end))
                              for m in site.mentions}
                    op = rewrite.OP_SUPPRESS if any(o == rewrite.OP_SUPPRESS for _, o in mapped.values()) \
                        else rewrite.OP_GENERALIZE
                    plans += rewrite.plan_map([site], lambda v, m=mapped: m[v][0], op)
            elif status == "S" and swap and slot in swap:
                for plan in rewrite.plan_swap(sites, swap[slot], fixed=fixed):
                    refs_here = {m.ref for m in plan.site.mentions}
                    if refs_here <= fixed.keys():  # the site only repeats earlier replacements
                        plan.operator = fixed_ops[next(iter(refs_here))][0]
                    plans.append(plan)
                mapping, _, _ = rewrite.swap_assignment(sites, swap[slot], fixed)
                # a value the partner happens to share is not a replacement: remembering it would let the
                # document's later mentions leave unchanged (a rare chunk untouched)
                own = {m.ref: norm_key(m.value) for site in sites for m in site.mentions}
                assigned.update({r: _pack(rewrite.OP_SWAP, v) for r, v in mapping.items()
                                 if v is not None and r not in fixed and norm_key(v) != own.get(r)})
            elif status == "S" and (fallback or fixed):
                fn = self.fallback_fn(category, fallback or "generalize", kind_of_slot(slot), country_of_slot(slot))
                for site in sites:
                    mapped = {m.value: fn(m.value, _before(chunk.text, m.start), _after(chunk.text, m.end))
                              if fallback
                              else (m.value, rewrite.OP_SWAP)
                              for m in site.mentions if m.ref not in fixed}
                    ops = {o for _, o in mapped.values() if fallback} | {fixed_ops[m.ref][0] for m in site.mentions
                                                                       if m.ref in fixed}
                    op = next((o for o in (rewrite.OP_SUPPRESS, rewrite.OP_GENERALIZE, rewrite.OP_SWAP) if o in ops),
                              rewrite.OP_SWAP)
                    plans += rewrite.plan_map([site], lambda v, m=mapped: m[v][0], op, fixed=fixed)
                    assigned.update({m.ref: _pack(*reversed(mapped[m.value])) for m in site.mentions
                                     if fallback and m.ref not in fixed and not m.acronym})
            elif status == "C":
                placeholder = release.placeholder(category)
                plans += rewrite.plan_map(sites, lambda v, p=placeholder: p, rewrite.OP_SUPPRESS)
            elif status == "G":
                plans += plan_generalized(chunk.text, sites, release.generalizer(category), category,
                                          kind_of_slot(slot), country_of_slot(slot))
        if assigned:
            self.memory.remember(chunk.doc_id, assigned, release.pool.ttl_seconds)
        result = rewrite.apply(chunk.text, chunk.entities or [], plans)
        released = _copy(chunk)
        released.text = result.text
        released.entities = result.entities
        released.changes = result.changes
        released.release = dict(self._echo)
        released.embedding = None
        logged = [{**c, "old": old} for c, old in zip(result.changes, result.old)]
        return released, logged

    def log(self, chunk: Chunk, pool: str, action: str, reason: str, entry: PoolEntry | None, an: Analysis,
             released: Chunk, changes: list[dict[str, Any]], pair_id: str | None = None,
             partner: Chunk | None = None, categories: list[str] | None = None) -> dict[str, Any]:
        after = analyze(clear_view(released, changes), self.release)
        return {
            "schema": LOG_SCHEMA,
            "release": dict(self._echo),
            "doc_id": chunk.doc_id,
            "chunk_index": chunk.chunk_index,
            "chunk_key": chunk.key,
            "pool": pool,
            "action": action,
            "reason": reason,
            "rare": bool(entry.rare) if entry else False,
            "seen_count": int(entry.seen_count) if entry else 0,
            "tuple_digest": entry.j_digest if entry else None,
            "pair_id": pair_id,
            "partner": None if partner is None else {"doc_id": partner.doc_id, "chunk_index": partner.chunk_index,
                                                     "chunk_key": partner.key},
            "categories": categories or [],
            "tuple_before": an.tuple(self.release.join_separator),
            "tuple_after": after.tuple(self.release.join_separator),
            "changes": changes,
            "released_at": float(self.clock()),
        }



class SwapProcessor:
    """See the module docstring. ``rng``: ``random.Random`` (seed it for reproducible runs);
    ``clock``: seconds, used to stamp pool entries (``expire(now)`` compares against it)."""

    def __init__(self, release: Release, pool_store: PoolStore, counts_store: TupleCounts,
                 rng: random.Random | None = None, clock: Callable[[], float] = time.time,
                 claim_retries: int = 4, memory: ReplacementMemory | None = None):
        self.release = release
        self.pools = pool_store
        self.counts = counts_store
        self.rng = rng or random.Random()
        self.clock = clock
        self.claim_retries = claim_retries
        self.releaser = Releaser(release, clock, memory)
        self._box = ""  # where claims go now, and the tag of their tokens (exactly-once; module docstring)
        self._tag = ""

    # -- public API -------------------------------------------------------------------------------
    def offer(self, chunk: Chunk, source: tuple[str, int, int] | None = None) -> SwapOutput:
        """Take one chunk; return what leaves now (possibly nothing: the chunk waits). ``source``: (topic,
        partition, offset) of its input record, with exactly-once (module docstring)."""
        if source is None:
            self._box, self._tag = "", ""
            return self._offer(chunk, "")
        topic, partition, offset = source
        self._box, self._tag = box_of(topic, partition), f"i:{int(offset)}"
        try:
            return self._offer(chunk, self._box)
        finally:
            self._box, self._tag = "", ""

    def _offer(self, chunk: Chunk, box: str) -> SwapOutput:
        chunk = _copy(chunk)  # without its embedding
        pool = pool_of(chunk)
        if self.pools.status(pool, chunk.key) is not None:
            return SwapOutput()  # redelivery of a chunk that waits or already left through a claim
        release = self.release
        an = analyze(chunk, release)
        J = release.swapped
        if not J or not an.presence(J):
            return self._direct(chunk, an, "untouched", "no_values")
        j_digest = an.digest(J)
        seen = self.counts.observe(release.counts_scope, chunk.key, j_digest, release.pool.ttl_seconds)
        rare = seen < release.rare_k
        wants = (rare and release.protect != "none") or self.rng.random() < release.swap_rate
        entry = make_entry(chunk, an, self.releaser, J, rare, "rare" if rare else "selected", float(self.clock()),
                           int(seen))
        entry.source = box
        if not entry.presence:  # only values of unknown kind (generalized by finalize): nothing a partner could give
            return self._direct(chunk, an, "untouched", "no_values", entry=entry)
        offer = _Offer(chunk, an, entry, wants)

        for partner_pool in (pool, handover_pool_of(chunk)):
            paired = self._pair(partner_pool, offer) if partner_pool else None
            if paired is not None:
                return paired
        if not wants:
            if release.protect == "all":  # not offered for swapping, but its masked values must change
                return self._direct(chunk, an, "", "not_selected", entry=entry, fallback=release.fallback)
            return self._direct(chunk, an, "untouched", "not_selected", entry=entry)
        out = SwapOutput()
        for _ in range(release.pool.max_size + self.claim_retries):
            waiting = self.pools.entries(pool)
            if len(waiting) < release.pool.max_size:
                break
            out.extend(self._release_waiting(pool, waiting[0], "pool_full"))
        self.pools.add(pool, entry, chunk.to_wire(), release.pool.ttl_seconds)
        return out

    def expire(self, now: float | None = None) -> SwapOutput:
        """Release every chunk that has waited ``pool.max_wait_seconds`` (fallback if rare)."""
        now = self.clock() if now is None else now
        limit = now - self.release.pool.max_wait_seconds
        out = SwapOutput()
        for pool in self.pools.pools():
            for entry in self.pools.entries(pool):
                if entry.enqueued_at > limit:
                    break
                out.extend(self._release_waiting(pool, entry, "timeout"))
        return out

    def drain(self) -> SwapOutput:
        """End of input (embedded runner): everything still waiting leaves with its fallback."""
        out = SwapOutput()
        for pool in self.pools.pools():
            for entry in self.pools.entries(pool):
                out.extend(self._release_waiting(pool, entry, "drain"))
        return out

    def recover(self) -> SwapOutput:
        """At-least-once: outputs stashed by claims but never acknowledged (a crash between claim and produce):
        emit them again (same chunk keys, so downstream deduplicates) and ``ack`` them."""
        out = SwapOutput()
        for token, payload in self.pools.outbox():
            out.extend(SwapOutput.from_payload(payload, token))
        return out

    def ack(self, tokens: list[str] | SwapOutput, box: str = "") -> None:
        """The records of these outputs are on the broker: forget their outbox entries."""
        if isinstance(tokens, SwapOutput):
            tokens, box = tokens.tokens, tokens.box
        if tokens:
            self.pools.ack(list(tokens), box)

    # -- exactly-once (module docstring) -----------------------------------------------------------
    def owed(self, box: str) -> dict[int, SwapOutput]:
        """The partition's stashed outputs of claims made while handling an input record, by the record's offset:
        when the record is handled again (its transaction did not commit, or it did and the entry is forgotten by
        ``resolve`` before), they are emitted again with it."""
        owed: dict[int, SwapOutput] = {}
        for token, payload in self.pools.outbox(box):
            tag = parse_token(token)
            if tag[0] == "i":
                owed.setdefault(tag[1], SwapOutput(box=box)).extend(SwapOutput.from_payload(payload, token, box))
        return owed

    def resolve(self, box: str, committed: int | None, metadata: str) -> list[tuple[SwapOutput, str]]:
        """The partition's outbox against its committed offset and metadata, read by its new owner after fencing
        the previous one and before committing anything: forgets what was committed, and returns the time-driven
        outputs that were not, per metadata, to be committed again with offset ``committed`` and that metadata."""
        done: list[str] = []
        again: dict[str, SwapOutput] = {}
        for token, payload in self.pools.outbox(box):
            tag = parse_token(token)
            if committed is None:
                continue  # nothing of this partition was ever committed: every input entry waits for its record
            if tag[0] == "i":
                if tag[1] < committed:
                    done.append(token)
            elif tag[1] < committed or (tag[1] == committed and tag[2] == metadata):
                done.append(token)
            else:
                again.setdefault(tag[2], SwapOutput(box=box)).extend(SwapOutput.from_payload(payload, token, box))
        if done:
            self.pools.ack(done, box)
        return [(out, k) for k, out in again.items()]

    def expire_owned(self, now: float | None, owned: dict[str, int]) -> dict[str, tuple[SwapOutput, str]]:
        """The wait bound with exactly-once: releases only chunks whose input partition (``PoolEntry.source``) is in
        ``owned`` (box → committed offset); per partition, the output and the metadata of the transaction that
        must carry it (offset: the committed one, unchanged)."""
        now = self.clock() if now is None else now
        limit = now - self.release.pool.max_wait_seconds
        out: dict[str, tuple[SwapOutput, str]] = {}
        for pool in self.pools.pools():
            for entry in self.pools.entries(pool):
                if entry.enqueued_at > limit:
                    break
                if entry.source not in owned:
                    continue
                if entry.source not in out:
                    out[entry.source] = (SwapOutput(box=entry.source), secrets.token_hex(6))
                released, k = out[entry.source]
                self._box, self._tag = entry.source, f"t:{int(owned[entry.source])}:{k}"
                try:
                    released.extend(self._release_waiting(pool, entry, "timeout"))
                finally:
                    self._box, self._tag = "", ""
        return {box: (released, k) for box, (released, k) in out.items() if len(released)}

    def _token(self) -> str:
        return f"{self._tag}:{secrets.token_hex(8)}" if self._tag else secrets.token_hex(8)

    # -- pairing ----------------------------------------------------------------------------------
    def _pair(self, pool: str, offer: _Offer) -> SwapOutput | None:
        for _ in range(self.claim_retries):
            candidates = [e for e in self.pools.entries(pool) if valid_pair(offer.entry, e)]
            if not offer.wants:
                candidates = [e for e in candidates if e.rare] if self.release.donors else []
            if not candidates:
                return None
            preferred = [e for e in candidates if e.rare] or candidates
            ours = set(offer.entry.presence)
            most = max(len(ours & set(e.presence)) for e in preferred)  # a partner for as many slots as can be
            preferred = [e for e in preferred if len(ours & set(e.presence)) == most]
            preferred = [e for e in preferred if e.presence == offer.entry.presence and e.shape == offer.entry.shape] \
                or preferred
            pick = self.rng.choice(preferred)
            wire = self.pools.load(pool, pick.chunk_id)
            if wire is None:
                continue  # taken meanwhile
            partner = Chunk.from_wire(wire)
            token = self._token()
            reason = offer.entry.reason if offer.wants else "donor"
            out = self._swap(pool, token.rpartition(":")[2], offer, reason, partner, pick)
            out.box = self._box
            if self.pools.claim(pool, [pick.chunk_id], [offer.chunk.key], token, out.to_payload(),
                                self.release.pool.ttl_seconds, self._box):
                out.tokens.append(token)
                return out
        return None

    def _swap(self, pool: str, pair_id: str, offer: _Offer, reason: str, partner: Chunk,
              partner_entry: PoolEntry) -> SwapOutput:
        """Exchange the values of the slots both chunks have (a court for a court); a protected chunk's
        other slots get the fallback."""
        J = self.release.swapped
        p_an = analyze(partner, self.release)
        common = {s for s in set(offer.entry.presence) & set(partner_entry.presence)
                  if offer.entry.slot_digests.get(s) != partner_entry.slot_digests.get(s)}  # same values: no change
        ours = {s: offer.analysis.slot_values[s] for s in offer.entry.presence if s in common}
        theirs = {s: p_an.slot_values[s] for s in partner_entry.presence if s in common}
        out = SwapOutput()
        a_chunk, a_log = self.releaser.finalize(offer.chunk, offer.analysis, swap=theirs,
                                                fallback=self._protection(offer.entry))
        b_chunk, b_log = self.releaser.finalize(partner, p_an, swap=ours, fallback=self._protection(partner_entry))
        out.chunks += [a_chunk, b_chunk]
        categories = sorted({offer.analysis.slot_category[s] for s in common}, key=CATEGORIES.index)
        out.log.append(self.releaser.log(offer.chunk, pool, "swapped", reason, offer.entry, offer.analysis, a_chunk,
                                 a_log, pair_id, partner, categories))
        out.log.append(self.releaser.log(partner, pool, "swapped", partner_entry.reason, partner_entry, p_an, b_chunk,
                                 b_log, pair_id, offer.chunk, categories))
        return out

    def _protection(self, entry: PoolEntry) -> str | None:
        """The fallback a chunk's unpaired values get: every chunk's with ``protect: all``, rare ones' with
        ``protect: rare``, none with ``protect: none``."""
        protect = self.release.protect
        return self.release.fallback if protect == "all" or (entry.rare and protect == "rare") else None

    def _release_waiting(self, pool: str, entry: PoolEntry, reason: str) -> SwapOutput:
        """Claim one waiting chunk and release it alone (fallback if rare)."""
        wire = self.pools.load(pool, entry.chunk_id)
        if wire is None:
            return SwapOutput()
        chunk = Chunk.from_wire(wire)
        an = analyze(chunk, self.release)
        policy = self._protection(entry)
        released, changes = self.releaser.finalize(chunk, an, fallback=policy)
        action = _fallback_action(changes, self.release.swapped)
        token = self._token()
        out = SwapOutput([released], [self.releaser.log(chunk, pool, action, reason, entry, an, released, changes)],
                         box=self._box)
        if not self.pools.claim(pool, [entry.chunk_id], [], token, out.to_payload(), self.release.pool.ttl_seconds,
                                self._box):
            return SwapOutput()  # another worker took it
        out.tokens.append(token)
        return out

    def _direct(self, chunk: Chunk, an: Analysis, action: str, reason: str,
                entry: PoolEntry | None = None, fallback: str | None = None) -> SwapOutput:
        """Release a chunk that never entered a pool (its input offset covers it: no outbox); with
        ``fallback`` its swapped categories get it (the action then follows from what changed)."""
        released, changes = self.releaser.finalize(chunk, an, fallback=fallback)
        action = _fallback_action(changes, self.release.swapped) if fallback else action
        if action == "untouched":  # an entity an earlier chunk of its document changed changes here too
            action = _fallback_action(changes, self.release.swapped)
        return SwapOutput([released], [self.releaser.log(chunk, pool_of(chunk), action, reason, entry, an, released,
                                                 changes)])

def box_of(topic: str, partition: int) -> str:
    """The outbox of one input partition (exactly-once)."""
    return f"{topic}|{int(partition)}"


def parse_token(token: str) -> tuple:
    """An exactly-once outbox token's tag: ("i", offset) or ("t", committed offset, k); ("", ) otherwise."""
    parts = token.split(":")
    if parts[0] == "i" and len(parts) == 3:
        return "i", int(parts[1])
    if parts[0] == "t" and len(parts) == 4:
        return "t", int(parts[1]), parts[2]
    return ("",)


def make_entry(chunk: Chunk, an: Analysis, releaser: Releaser, J: tuple[str, ...], rare: bool, reason: str,
               enqueued_at: float, seen: int) -> PoolEntry:
    """What the pairing compares about a chunk: digests of its tuple on J and of its released other values,
    and per slot of J (the kinds it holds) the number of entities and a digest of their values."""
    slots = swappable_slots(an, releaser.release)
    return PoolEntry(chunk.key, chunk.doc_id, rare, reason, an.digest(J), releaser.u_digest(an), list(slots),
                     enqueued_at, seen, an.slot_shape(slots), an.slot_digests(slots))


def plan_generalized(text: str, sites: list[Site], gen: Generalizer, category: str, kind: str | None,
                     country: str | None) -> list[rewrite.SitePlan]:
    """Plans generalizing the sites of one slot, the values of each sentence together
    (``Generalizer.generalize_together``): "increased to 16% from 12%" keeps its order ("15-20% from 10-15%"); a value
    inside a phrase the tagger did not take whole stays (``Generalizer.part_of_phrase``: "our Q1 [2017]")."""
    mentions = [m for site in sites for m in site.mentions]
    starts = [s.start for s in split_sentences(text)] if len(mentions) > 1 else [0]
    by_sentence: dict[int, list[Mention]] = {}
    for m in mentions:
        by_sentence.setdefault(bisect.bisect_right(starts, m.start), []).append(m)
    new: dict[int, str] = {}
    for group in by_sentence.values():
        values = [m.value for m in group]
        outs = gen.in_context_together([_before(text, m.start) for m in group], values,
                                       gen.generalize_together(values, category, kind, country),
                                       [_after(text, m.end) for m in group])
        new.update({m.start: out for m, out in zip(group, outs)})
    plans: list[rewrite.SitePlan] = []
    for site in sites:
        mapped = {m.value: new[m.start] for m in site.mentions}
        plans += rewrite.plan_map([site], mapped.__getitem__, rewrite.OP_GENERALIZE)
    return plans


def _before(text: str, start: int) -> str:
    """The words a generalizer reads before a value (``Generalizer.in_context``)."""
    return text[max(0, start - 24):start]


def _after(text: str, end: int) -> str:
    """The words a generalizer reads after a value (``Generalizer.in_context``)."""
    return text[end:end + 24]


def valid_pair(ours: PoolEntry, theirs: PoolEntry) -> bool:
    """§2.1/§2.3 with kinds: different document, a difference on the unswapped categories (as released),
    at least one slot (kind) in common, and a different value on one of the common slots (otherwise
    nothing changes); same pool is the caller's part."""
    if theirs.doc_id == ours.doc_id or theirs.chunk_id == ours.chunk_id or theirs.u_digest == ours.u_digest:
        return False
    common = set(ours.presence) & set(theirs.presence)
    return any(ours.slot_digests.get(s) != theirs.slot_digests.get(s) for s in common)


def _pack(operator: str, value: str) -> str:
    """A memory entry: the operator that made the value, and the value."""
    return f"{operator}|{value}"


def _unpack(entry: str) -> tuple[str, str]:
    operator, _, value = entry.partition("|")
    return (operator, value) if value else (rewrite.OP_SWAP, operator)


def _fallback_action(changes: list[dict[str, Any]], swapped: tuple[str, ...]) -> str:
    ops = {c["operator"] for c in changes if c["category"] in swapped}
    for op, action in ((rewrite.OP_GENERALIZE, "generalized"), (rewrite.OP_SUPPRESS, "suppressed"),
                       (rewrite.OP_SWAP, "swapped")):  # swapped: entities an earlier chunk's swap changed
        if op in ops:
            return action
    return "untouched"


def _copy(chunk: Chunk) -> Chunk:
    """A deep copy without the embedding (nothing this stage releases or pools carries one), through
    orjson: several times faster than ``copy.deepcopy`` of the wire form."""
    wire = chunk.to_wire()
    wire.pop("embedding", None)
    return Chunk.from_wire(serde.loads(serde.dumps(wire)))


def clear_view(released: Chunk, changes: list[dict[str, Any]]) -> Chunk:
    """The released chunk with the spans this stage rewrote (``changes``) counted as clear mentions,
    so ``tuples.analyze`` gives its tuple as released; spans the pii stage replaced stay out."""
    view = _copy(released)
    changed = [(c["start"], c["end"]) for c in changes]
    for e in view.entities or []:
        if e.surrogate is not None and any(s <= e.start and e.end <= t for s, t in changed):
            e.surrogate = None
    return view
