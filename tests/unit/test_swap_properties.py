"""Property tests of swapping (paper 000 §2.1), streaming and batch:

* a swap between two chunks that hold the same kinds (slots), all of kinds the release swaps (not its
  ``generalized_kinds``) and all with different values, and that are
  their documents' only chunks (no earlier replacement to keep) exchanges the whole tuple on the swapped
  categories J: every category's marginal counts and the joint distribution inside J are the same over
  those pairs before and after;
* a value that arrives by a swap is a value of the same kind somewhere in the corpus (or its acronym);
* no swap inside one document, none across clusters;
* F and U values never change, C values are always replaced, NO_MASK entities never change (scope masked);
* no rare chunk leaves untouched (streaming), and with ``protect: all`` no chunk with values on J does;
* no line break is removed or added;
* every chunk is released once, offsets are exact, and the log's old values give the input back.
"""
from __future__ import annotations

import copy
import random
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonstream.swap import InMemoryPoolStore, InMemoryTupleCounts, Release, SwapProcessor
from anonstream.swap.batch import swap_corpus
from anonstream.swap.pairing import clear_view, pool_of
from anonstream.swap.release import DEFAULT_RELEASE
from anonstream.swap.testing import make_chunk
from anonstream.swap.tuples import analyze, kind_of_slot

VOCAB = {
    "ORG": ["Acme", "Beta Corp", "Siemens", "the Gamma Group", "ARM", "Johnson & Johnson"],
    "LOC/GPE": ["Paris", "Texas", "Denmark", "the United States"],
    "MISC/PRODUCT": ["Widget", "IC Validator"],
    "MISC/EVENT": ["Expo 2000", "Analyst Day"],
    "DATETIME/DATE": ["31 August 2006", "May 2001", "2003", "5 June 1999", "the next day"],
    "DEM/NORP": ["Danish", "French"],
    "ORG#court": ["Słupsk Regional Court", "Ankara Court"],
    "ORG#party~": ["Labour Party", "Rights and Freedoms Party"],  # NO_MASK: never changes
    "PERSON!": ["[PERSON_1]", "[PERSON_2]"],
}
SEPARATORS = [" ", ", ", " and ", " & ", "'s ", "' ", " in ", ". ", " said ", " on ", ". On ", ",\n", "\n", " and\n"]
FILLER = ["we", "met", "report", "growth"]


def _release(protect: str = "all", scope: str = "masked", **categories) -> Release:
    obj = copy.deepcopy(DEFAULT_RELEASE)
    obj["categories"].update({k: {"status": v} for k, v in categories.items()})
    obj["swap_rate"] = 0.5
    obj["protect"], obj["scope"] = protect, scope
    return Release.from_dict(obj)


RELEASES = [
    Release.default(),
    _release("rare", Date="F", Demographic="C", Product="S", Event="C"),
    _release("all", "all", Date="F", Location="F", Organization="S", Product="U"),
    _release("none", Organization="S", Location="S"),  # the paper as written: no rare-first protection
]

item = st.one_of(
    st.sampled_from(sorted(VOCAB)).flatmap(lambda t: st.sampled_from(VOCAB[t]).map(lambda v: f"{{{t}:{v}}}")),
    st.sampled_from(FILLER),
)
template = st.lists(st.tuples(item, st.sampled_from(SEPARATORS)), min_size=1, max_size=7).map(
    lambda parts: "".join(i + s for i, s in parts).rstrip() + ".")


@st.composite
def corpora(draw):
    chunks = []
    for d in range(draw(st.integers(2, 5))):
        n = draw(st.integers(1, 4))
        for i in range(n):
            chunks.append(make_chunk(f"doc{d}", i, draw(template), component=draw(st.integers(0, 1)),
                                     chunk_count=n))
    return chunks


def _keys(chunk, release, categories):
    an = analyze(chunk, release)
    return {c: tuple(an.keys.get(c, [])) for c in categories}


def _slot_values(chunks, release):
    """slot -> every value (and its acronym) of that slot in the corpus, as keys."""
    from anonstream.swap.rewrite import acronym_form
    from anonstream.swap.tuples import norm_key

    out: dict[str, set[str]] = {}
    for chunk in chunks:
        for m in analyze(chunk, release).mentions:
            out.setdefault(m.slot, set()).update({m.key, norm_key(acronym_form(m.value))})
    return out


def _after(released, record, release, categories):
    return _keys(clear_view(released, record["changes"]), release, categories)


def _check(chunks, released, log, release, stream: bool):
    from anonstream.swap.release import CATEGORIES
    from anonstream.swap.tuples import norm_key

    by_key = {c.key: c for c in chunks}
    assert sorted(r["chunk_key"] for r in log) == sorted(by_key)  # each chunk released once
    out_by_key = {r["chunk_key"]: (c, r) for c, r in zip(released, log)}
    J = release.swapped
    values_of_slot = _slot_values(chunks, release)
    chunks_of_doc = Counter(c.doc_id for c in chunks)
    pairs: dict[str, list[str]] = {}
    for key, (out, record) in out_by_key.items():
        original = by_key[key]
        assert out.text.count("\n") == original.text.count("\n")  # no line break removed or added
        # offsets exact; the old values give the input back
        for e in out.entities:
            assert out.text[e.start:e.end] == e.text
        text = out.text
        for change in sorted(record["changes"], key=lambda c: -c["start"]):
            assert text[change["start"]:change["end"]] == change["new"]
            text = text[:change["start"]] + change["old"] + text[change["end"]:]
        assert text == original.text
        before = _keys(original, release, CATEGORIES)
        after = _after(out, record, release, CATEGORIES)
        for c in CATEGORIES:
            status = release.status(c)
            if status in ("F", "U"):
                assert after[c] == before[c], c  # F (and U) values never change
            if status == "C" and before[c]:
                assert after[c] == (release.placeholder(c).casefold(),)  # C values always replaced
        if release.scope == "masked":  # NO_MASK entities stay as written
            for e in original.entities:
                if e.identifier_type == "NO_MASK":
                    assert any(o.entity_id == e.entity_id and o.text == e.text and o.surrogate is None
                               for o in out.entities)
        # a swapped-in value is one of the same kind
        slot_by_offsets = {(e.start, e.end): e for e in out.entities}
        for change in record["changes"]:
            if change["operator"] == "swap" and (change["start"], change["end"]) in slot_by_offsets:
                e = slot_by_offsets[(change["start"], change["end"])]
                from anonstream.swap.tuples import slot_of
                assert norm_key(e.text) in values_of_slot[slot_of(e)], (e.text, slot_of(e))
        if stream and record["rare"] and release.protect != "none":
            assert record["action"] != "untouched"
        if stream and release.protect == "all" and record["tuple_digest"]:
            assert record["action"] != "untouched"
        if record["action"] == "swapped" and record["pair_id"]:
            pairs.setdefault(record["pair_id"], []).append(key)
        else:
            assert record["pair_id"] is None
    swapped_before: Counter = Counter()
    swapped_after: Counter = Counter()
    marginal_before: Counter = Counter()
    marginal_after: Counter = Counter()
    for pair_id, keys in pairs.items():
        assert len(keys) == 2
        a, b = keys
        assert by_key[a].doc_id != by_key[b].doc_id  # never inside one document
        assert pool_of(by_key[a]) == pool_of(by_key[b])  # never across clusters
        an_a, an_b = analyze(by_key[a], release), analyze(by_key[b], release)
        slots = an_a.slots_in(J)
        # the whole tuple moves where both chunks hold as many values per slot; with fewer, a lone mention takes one
        # value of the partner's (rewrite.plan_swap: "a sentence about one place stays about one")
        whole = (slots == an_b.slots_in(J) and all(release.swaps_slot(kind_of_slot(s)) for s in slots)
                 and an_a.slot_shape(slots) == an_b.slot_shape(slots)
                 and chunks_of_doc[by_key[a].doc_id] == chunks_of_doc[by_key[b].doc_id] == 1
                 and all(d != an_b.slot_digests(slots)[s] for s, d in an_a.slot_digests(slots).items()))
        if not whole:
            continue
        for x, y in ((a, b), (b, a)):
            x_after = _after(*out_by_key[x], release, J)
            y_before = _keys(by_key[y], release, J)
            assert x_after == y_before  # the whole tuple on J moved
        for k in keys:
            tb = _keys(by_key[k], release, J)
            ta = _after(*out_by_key[k], release, J)
            swapped_before[tuple(sorted(tb.items()))] += 1
            swapped_after[tuple(sorted(ta.items()))] += 1
            for c in J:
                marginal_before[(c, tb[c])] += 1
                marginal_after[(c, ta[c])] += 1
    assert swapped_before == swapped_after  # joint distribution inside the swapped set
    assert marginal_before == marginal_after  # every category's marginal counts
    return len(pairs)


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(corpora(), st.sampled_from(range(len(RELEASES))), st.randoms(use_true_random=False),
       st.integers(1, 6))
def test_streaming_swap_invariants(chunks, which, rnd, max_size):
    release = RELEASES[which]
    obj = release.to_dict()
    obj["pool"]["max_size"] = max_size
    release = Release.from_dict(obj)
    clock = [0.0]
    p = SwapProcessor(release, InMemoryPoolStore(), InMemoryTupleCounts(), random.Random(rnd.random()),
                      clock=lambda: clock[0])
    order = list(chunks)
    rnd.shuffle(order)
    released, log = [], []
    for chunk in order:
        out = p.offer(chunk)
        clock[0] += rnd.choice([0.0, 5.0, 20.0])
        out.extend(p.expire())
        released += out.chunks
        log += out.log
    out = p.drain()
    released += out.chunks
    log += out.log
    _check(chunks, released, log, release, stream=True)


@SETTINGS
@given(corpora(), st.sampled_from(range(len(RELEASES))), st.randoms(use_true_random=False), st.booleans())
def test_batch_swap_invariants(chunks, which, rnd, protect_rare):
    release = RELEASES[which]
    released, log = swap_corpus(chunks, release, random.Random(rnd.random()), protect_rare=protect_rare)
    n_pairs = _check(chunks, released, log, release, stream=False)
    swapped = 2 * n_pairs
    assert swapped < release.swap_rate * len(chunks) + 2  # stops at the target rate
    if protect_rare:
        assert all(r["action"] != "untouched" for r in log if r["rare"])


def test_the_properties_do_see_swaps():
    """Guard against a vacuous property run: the generator yields swaps."""
    rnd = random.Random(5)
    total = 0
    for _ in range(20):
        docs = [[make_chunk(f"doc{d}", i, "{ORG:%s} in {LOC/GPE:%s} on {DATETIME/DATE:%s}." % (
            rnd.choice(VOCAB["ORG"]), rnd.choice(VOCAB["LOC/GPE"]), rnd.choice(VOCAB["DATETIME/DATE"])))
            for i in range(3)] for d in range(4)]
        flat = [c for doc in docs for c in doc]
        released, log = swap_corpus(flat, RELEASES[0], random.Random(rnd.random()))
        total += _check(flat, released, log, RELEASES[0], stream=False)
    assert total > 0
