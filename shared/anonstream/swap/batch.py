"""Batch mode for planning: the paper's sequential swapping procedure on a whole corpus.

Paper 000 §2.2.1 and §3.2.1: inside the constraints C (same cluster, different documents) swap
pairs are drawn uniformly at random among the valid pairs (§2.1), swapped, and taken out; this
repeats until the swap rate r of the release is reached (r·n swapped chunks, n = corpus size; the
paper's candidate rates are r = 2/n, 4/n, ..., 60/n) or no valid pair is left. The release-wide C
and G operators apply to every chunk as in the stream. With ``protect_rare`` the chunks whose tuple
on J is rare in the *whole* corpus (count < rare_k), or every chunk with the release's ``protect: all``,
receive the release's fallback on what got no partner, which is what the streaming stage does and the
paper does not.

The rewrite, validity rule and log records are the streaming processor's (``pairing.Releaser``,
``pairing.valid_pair``), so a plan made here describes what the stage would do.
"""
from __future__ import annotations

import random
import secrets
from collections import Counter
from typing import Any, Iterable

from ..records import Chunk
from .pairing import Releaser, _fallback_action, make_entry, pool_of, valid_pair
from .release import CATEGORIES, Release
from .stores import PoolEntry
from .tuples import analyze


def swap_corpus(chunks: Iterable[Chunk], release: Release, rng: random.Random | None = None, *,
                protect_rare: bool = False, clock=lambda: 0.0) -> tuple[list[Chunk], list[dict[str, Any]]]:
    """Return the post-swap corpus (input order) and one swap-log record per chunk."""
    rng = rng or random.Random()
    chunks = list(chunks)
    releaser = Releaser(release, clock)
    J = release.swapped
    analyses = [analyze(c, release) for c in chunks]
    entries: list[PoolEntry | None] = []
    for c, an in zip(chunks, analyses):
        if not J or not an.presence(J):
            entries.append(None)
            continue
        entries.append(make_entry(c, an, releaser, J, False, "batch", 0.0, 0))
    counts = Counter(e.j_digest for e in entries if e is not None)
    for e in entries:
        if e is not None:
            e.seen_count = counts[e.j_digest]
            e.rare = e.seen_count < release.rare_k

    # all valid pairs inside each cluster: uniform weights inside, zero outside (§2.2.1)
    by_pool: dict[str, list[int]] = {}
    for i, (c, e) in enumerate(zip(chunks, entries)):
        if e is not None:
            by_pool.setdefault(pool_of(c), []).append(i)
    pairs: list[tuple[int, int]] = []
    for members in by_pool.values():
        for a in range(len(members)):
            for b in range(a + 1, len(members)):
                i, j = members[a], members[b]
                if valid_pair(entries[i], entries[j]):
                    pairs.append((i, j))

    target = release.swap_rate * len(chunks)
    partner_of: dict[int, int] = {}
    pair_ids: dict[int, str] = {}
    while pairs and len(partner_of) < target:
        k = rng.randrange(len(pairs))
        i, j = pairs[k]
        pairs[k] = pairs[-1]
        pairs.pop()
        if i in partner_of or j in partner_of:
            continue
        partner_of[i], partner_of[j] = j, i
        pair_ids[i] = pair_ids[j] = secrets.token_hex(8)

    out_chunks: list[Chunk] = []
    log: list[dict[str, Any]] = []
    for i, (chunk, an, entry) in enumerate(zip(chunks, analyses, entries)):
        pool = pool_of(chunk)
        if i in partner_of:
            j = partner_of[i]
            common = {s for s in set(entry.presence) & set(entries[j].presence)
                      if entry.slot_digests.get(s) != entries[j].slot_digests.get(s)}
            theirs = {s: analyses[j].slot_values[s] for s in common}
            protect = release.fallback if protect_rare and (entry.rare or release.protect == "all") else None
            released, changes = releaser.finalize(chunk, an, swap=theirs, fallback=protect)
            record = releaser.log(chunk, pool, "swapped", "batch", entry, an, released, changes, pair_ids[i],
                                  chunks[j], sorted({an.slot_category[s] for s in common}, key=CATEGORIES.index))
        elif entry is not None and (entry.rare or release.protect == "all") and protect_rare:
            released, changes = releaser.finalize(chunk, an, fallback=release.fallback)
            record = releaser.log(chunk, pool, _fallback_action(changes, J), "batch_unpaired", entry, an,
                                  released, changes)
        else:
            released, changes = releaser.finalize(chunk, an)
            record = releaser.log(chunk, pool, "untouched", "no_values" if entry is None else "not_selected",
                                  entry, an, released, changes)
        out_chunks.append(released)
        log.append(record)
    return out_chunks, log
