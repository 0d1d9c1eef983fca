"""The streaming swap core: pairing rules, rare-first, fallbacks, restart/redelivery behaviour."""
from __future__ import annotations

import copy
import random

import pytest

from anonstream import contracts
from anonstream.swap import InMemoryPoolStore, InMemoryTupleCounts, Release, SwapProcessor
from anonstream.swap.release import DEFAULT_RELEASE
from anonstream.swap.testing import make_chunk


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def release(**over) -> Release:
    """The default release with dates at month level (the pairing tests read dates as written)."""
    obj = copy.deepcopy(DEFAULT_RELEASE)
    obj["categories"]["Date"] = {"status": "G", "generalizer": {"name": "date", "level": "month"}}
    for key, value in over.items():
        if key == "categories":
            obj["categories"].update(value)
        elif key == "pool":
            obj["pool"].update(value)
        else:
            obj[key] = value
    return Release.from_dict(obj)


def processor(rel=None, seed=0, pools=None, counts=None, clock=None):
    return SwapProcessor(rel or release(), pools or InMemoryPoolStore(), counts or InMemoryTupleCounts(),
                         random.Random(seed), clock or Clock())


A = "{ORG:Siemens} built a plant in {LOC/GPE:Texas} in {DATETIME/DATE:May 2001}."
B = "{ORG:ARM} opened an office in {LOC/GPE:Denmark} in {DATETIME/DATE:June 2003}."


def test_a_rare_chunk_waits_and_pairs_with_a_valid_partner_of_another_document():
    p = processor()
    assert len(p.offer(make_chunk("d1", 0, A))) == 0  # unique so far: waits for a partner
    out = p.offer(make_chunk("d2", 0, B))
    assert [c.text for c in out.chunks] == ["Siemens opened an office in Texas in June 2003.",
                                            "ARM built a plant in Denmark in May 2001."]
    assert {r["action"] for r in out.log} == {"swapped"}
    assert out.log[0]["pair_id"] == out.log[1]["pair_id"]
    assert out.log[0]["partner"]["doc_id"] == "d1" and out.log[1]["partner"]["doc_id"] == "d2"
    for chunk in out.chunks:
        contracts.validate("chunk-sanitized.v1.json", chunk.to_wire())
        assert chunk.release == p.release.to_echo() and chunk.embedding is None
        assert "d1" not in str(chunk.to_wire()["changes"]) and "pair" not in str(chunk.to_wire())
    for record in out.log:
        contracts.validate("swap-log.v1.json", record)


def test_no_swap_inside_one_document_or_across_clusters():
    p = processor(release(swap_rate=1.0))
    p.offer(make_chunk("d1", 0, A))
    assert len(p.offer(make_chunk("d1", 1, B))) == 0  # same document: not a partner
    assert len(p.offer(make_chunk("d2", 0, B, component=5))) == 0  # other cluster
    assert len(p.offer(make_chunk("d3", 0, B, model_version=2))) == 0  # other model version
    assert sorted(p.pools.pools()) == ["v1:c0", "v1:c5", "v2:c0"]


def test_a_partner_must_differ_on_an_unswapped_category():
    p = processor()
    p.offer(make_chunk("d1", 0, "{ORG:Siemens} in {LOC/GPE:Texas} in {DATETIME/DATE:3 May 2001}."))
    # same released Date (both generalize to "May 2001") and nothing else unswapped: a re-indexing
    assert len(p.offer(make_chunk("d2", 0, "{ORG:ARM} in {LOC/GPE:Denmark} in {DATETIME/DATE:9 May 2001}."))) == 0
    assert len(p.offer(make_chunk("d3", 0, "{ORG:ARM} in {LOC/GPE:Denmark} in {DATETIME/DATE:June 2001}."))) == 2


def test_a_partner_shares_a_kind_and_the_values_it_has_no_partner_for_are_generalized():
    p = processor()
    p.offer(make_chunk("d1", 0, A))
    out = p.offer(make_chunk("d2", 0, "{ORG:ARM} in {DATETIME/DATE:June 2003}."))
    assert [c.text for c in out.chunks] == ["Siemens in June 2003.",
                                            "ARM built a plant in the United States in May 2001."]
    assert out.log[1]["categories"] == ["Organization"]
    with_rare_protection_only = processor(release(protect="rare"))
    with_rare_protection_only.offer(make_chunk("d1", 0, A))
    out = with_rare_protection_only.offer(make_chunk("d2", 0, "{ORG:ARM} in {DATETIME/DATE:June 2003}."))
    assert out.chunks[1].text == "ARM built a plant in the United States in May 2001."  # d1 is rare


def test_values_move_only_between_entities_of_one_kind():
    p = processor(release(generalized_kinds=[]))  # courts swap too (the default generalizes them)
    p.offer(make_chunk("d1", 0, "The {ORG#court:Słupsk Regional Court} fined {ORG#company:Amber Sp. z o.o.} in {DATETIME:2001}."))
    out = p.offer(make_chunk("d2", 0, "The {ORG#party:Rights and Freedoms Party} met {ORG#court:Ankara Court} in {DATETIME:2002}."))
    assert [c.text for c in out.chunks] == ["The party met Słupsk Regional Court in 2002.",
                                            "The Ankara Court fined the company in 2001."]
    assert len(p.offer(make_chunk("d3", 0, "{ORG#party:Labour Party} won in {DATETIME:2003}."))) == 0  # no kind in common: waits


def test_no_mask_entities_stay_as_written_unless_the_release_scope_is_all():
    text = "The {ORG#court~:Court of Cassation} heard {ORG#company:BG Bank} in {DATETIME:2001}."
    partner = "The {ORG#court~:Supreme Court} heard {ORG#company:Amber Ltd} in {DATETIME:2002}."
    masked = processor()
    masked.offer(make_chunk("d1", 0, text))
    out = masked.offer(make_chunk("d2", 0, partner))
    assert [c.text for c in out.chunks] == ["The Supreme Court heard BG Bank in 2002.",
                                            "The Court of Cassation heard Amber Ltd in 2001."]
    everything = processor(release(scope="all", generalized_kinds=[]))
    everything.offer(make_chunk("d1", 0, text))
    out = everything.offer(make_chunk("d2", 0, partner))
    assert [c.text for c in out.chunks] == ["The Court of Cassation heard BG Bank in 2002.",
                                            "The Supreme Court heard Amber Ltd in 2001."]


def test_an_entity_changes_the_same_way_in_every_chunk_of_its_document():
    p = processor()
    p.offer(make_chunk("d1", 0, "He moved to {LOC#city:Ankara} in {DATETIME:2001}."))
    first = p.offer(make_chunk("d2", 0, "She lives in {LOC#city:Izmir} since {DATETIME:2002}."))
    assert first.chunks[0].text == "She lives in Ankara since 2002." and first.chunks[1].text == "He moved to Izmir in 2001."
    p.offer(make_chunk("d3", 0, "They met in {LOC#city:Bursa} in {DATETIME:2003}."))
    later = p.offer(make_chunk("d1", 1, "In {LOC#city:Ankara} he found work at {ORG#company:Koç Holding}.",
                               chunk_count=2))
    later.extend(p.drain())
    by_doc = {c.doc_id: c.text for c in later.chunks}
    assert by_doc["d1"] == "In Izmir he found work at the company."  # Ankara became Izmir before
    assert "Bursa" not in by_doc["d1"]


def test_an_acronym_defined_beside_its_name_travels_with_it():
    p = processor()
    p.offer(make_chunk("d1", 0, "He joined the {ORG#party@pkk:Kurdistan Workers' Party} ({ORG#party@pkk:PKK}) in {DATETIME:1990}."))
    out = p.offer(make_chunk("d2", 0, "She led the {ORG#party:Rights and Freedoms Party} in {DATETIME:2008}."))
    assert out.chunks[1].text == "He joined the Rights and Freedoms Party (RFP) in 1990."


def test_chunks_without_swapped_values_leave_at_once_with_release_wide_operators():
    p = processor()
    out = p.offer(make_chunk("d1", 0, "At {MISC/EVENT:Expo 2000} on {DATETIME/DATE:31 August 2006} "
                                      "{PERSON!:[PERSON_1]} spoke."))
    assert out.chunks[0].text == "At the expo in August 2006 [PERSON_1] spoke."
    assert out.log[0]["action"] == "untouched" and out.log[0]["reason"] == "no_values"
    assert [c["operator"] for c in out.chunks[0].changes] == ["generalize", "generalize"]


def test_direct_identifiers_left_in_clear_are_suppressed():
    p = processor()
    out = p.offer(make_chunk("d1", 0, "{PERSON:Ann Smith} spoke.", identifier_type="DIRECT"))
    assert out.chunks[0].text == "[Person] spoke."


@pytest.mark.parametrize("donors", [True, False])
def test_unselected_common_chunks_serve_as_donors_of_waiting_rare_chunks(donors):
    p = processor(release(swap_rate=0.0, donors=donors, protect="rare"))
    p.offer(make_chunk("d5", 0, B, component=9))  # B's tuple seen once (rare, waits in cluster 9)
    p.offer(make_chunk("d6", 0, B, component=9))  # twice: not rare; r = 0: leaves untouched
    assert len(p.offer(make_chunk("d1", 0, A))) == 0  # rare: waits in cluster 0
    out = p.offer(make_chunk("d2", 0, B))  # common and not selected
    if donors:
        assert [(r["reason"], r["action"]) for r in out.log] == [("donor", "swapped"), ("rare", "swapped")]
    else:
        assert [(r["reason"], r["action"]) for r in out.log] == [("not_selected", "untouched")]


def test_r_selects_common_chunks_and_no_donor_without_waiting_rare_chunks():
    rel = release(swap_rate=1.0, rare_k=1, protect="rare")  # k = 1: nothing is rare
    p = processor(rel)
    assert len(p.offer(make_chunk("d1", 0, A))) == 0  # selected (r = 1): waits
    assert len(p.offer(make_chunk("d2", 0, B))) == 2
    rel0 = release(swap_rate=0.0, rare_k=1, protect="rare")
    p0 = processor(rel0)
    out = p0.offer(make_chunk("d1", 0, A))
    assert out.log[0]["action"] == "untouched" and out.log[0]["reason"] == "not_selected"


def test_rare_waiting_partners_are_taken_first():
    rel = release(swap_rate=1.0)
    counts = InMemoryTupleCounts()
    p = processor(rel, counts=counts)
    common = "{ORG:Common} in {LOC/GPE:Everywhere} in {DATETIME/DATE:May 2001}."
    p.offer(make_chunk("d0", 0, common))
    p.offer(make_chunk("d0", 1, common))  # same document: cannot pair with d0/0
    # d0/0 waited as rare (first of its tuple), d0/1 as selected (seen twice)
    waiting = {e.chunk_id.split("|")[1]: e.rare for e in p.pools.entries("v1:c0")}
    assert waiting == {"0": True, "1": False}
    out = p.offer(make_chunk("d2", 0, B))
    assert out.log[1]["chunk_index"] == 0 and out.log[1]["rare"]


def test_a_chunk_not_selected_for_swapping_is_generalized_when_every_chunk_is_protected():
    p = processor(release(swap_rate=0.0, rare_k=1))  # nothing rare, nothing selected
    out = p.offer(make_chunk("d1", 0, A))
    assert out.chunks[0].text == "[Name] built a plant in the United States in May 2001."
    assert (out.log[0]["action"], out.log[0]["reason"]) == ("generalized", "not_selected")


def test_timeout_gives_rare_chunks_the_fallback_and_common_ones_leave_untouched():
    clock = Clock()
    rel = release(swap_rate=1.0, pool={"max_wait_seconds": 30}, protect="rare")
    p = processor(rel, clock=clock)
    p.offer(make_chunk("d1", 0, A))
    p.offer(make_chunk("d1", 1, A))  # not rare (seen twice), selected, waits
    clock.now += 10
    assert len(p.expire()) == 0
    clock.now += 25
    out = p.expire()
    assert [r["action"] for r in out.log] == ["generalized", "generalized"]
    assert [r["reason"] for r in out.log] == ["timeout", "timeout"]
    assert out.chunks[0].text == "[Name] built a plant in the United States in May 2001."
    # not rare, so not protected: but its entities are the ones d1/0 generalized (coreference kept)
    assert out.chunks[1].text == "[Name] built a plant in the United States in May 2001."
    other = p.offer(make_chunk("d9", 0, A, component=4))
    clock.now += 31
    other.extend(p.expire())
    assert other.chunks[0].text == "Siemens built a plant in Texas in May 2001."  # common, unprotected
    assert p.pools.pools() == []


def test_fallback_suppress_and_generalization_that_cannot_coarsen():
    rel = release(fallback="suppress")
    p = processor(rel)
    p.offer(make_chunk("d1", 0, A))
    out = p.drain()
    assert out.log[0]["action"] == "suppressed" and out.chunks[0].text.startswith("[Organization]")
    # S category whose generalizer leaves the value as it is: a placeholder protects it
    rel = release(categories={"Date": {"status": "S"}, "Organization": {"status": "U"},
                              "Location": {"status": "U"}, "Product": {"status": "U"}})
    p = processor(rel)
    p.offer(make_chunk("d1", 0, "{ORG:Siemens} in {DATETIME/DATE:2006}."))
    out = p.drain()
    assert out.chunks[0].text == "Siemens in [Date]." and out.log[0]["action"] == "suppressed"


def test_full_pool_releases_its_oldest_with_the_fallback():
    rel = release(pool={"max_size": 2})
    p = processor(rel)
    for i in range(3):
        out = p.offer(make_chunk("d1", i, "{ORG:Org%d} in {LOC/GPE:Here} in {DATETIME/DATE:June 2003}." % i))
    assert [r["reason"] for r in out.log] == ["pool_full"] and out.log[0]["chunk_index"] == 0
    assert len(p.pools.entries("v1:c0")) == 2


@pytest.mark.parametrize("protect", ["rare", "all"])
def test_no_rare_chunk_leaves_unprotected(protect):
    p = processor(release(swap_rate=0.0, protect=protect), seed=3)
    rng = random.Random(7)
    log = []
    for i in range(120):
        text = "{ORG:O%d} in {LOC/GPE:L%d} in {DATETIME/DATE:%s 2003}." % (
            rng.randrange(6), rng.randrange(3), rng.choice(["May", "June", "July"]))
        log += p.offer(make_chunk(f"d{rng.randrange(8)}", i, text, component=rng.randrange(2))).log
        log += p.expire(p.clock() + (i % 7)).log
    log += p.drain().log
    assert len(log) == 120
    assert all(r["action"] != "untouched" for r in log if r["rare"])
    if protect == "rare":
        assert {r["action"] for r in log} >= {"swapped", "untouched"}
    else:  # every chunk with values on J leaves changed
        assert {r["action"] for r in log} == {"swapped", "generalized"}


def test_redelivered_chunks_are_ignored_and_counted_once():
    p = processor()
    a = make_chunk("d1", 0, A)
    p.offer(a)
    assert len(p.offer(a)) == 0  # still waiting: not pooled twice
    out = p.offer(make_chunk("d2", 0, B))
    assert len(out) == 2
    assert len(p.offer(a)) == 0 and len(p.offer(make_chunk("d2", 0, B))) == 0  # already released
    assert p.counts.count(p.release.counts_scope, out.log[0]["tuple_digest"]) == 1


def test_outputs_of_claims_stay_in_the_outbox_until_acknowledged():
    p = processor()
    p.offer(make_chunk("d1", 0, A))
    out = p.offer(make_chunk("d2", 0, B))
    assert len(out.tokens) == 1
    recovered = p.recover()
    assert [c.to_wire() for c in recovered.chunks] == [c.to_wire() for c in out.chunks]
    p.ack(out)
    assert len(p.recover()) == 0


def test_input_chunk_is_not_mutated():
    p = processor()
    a = make_chunk("d1", 0, A)
    before = a.to_wire()
    p.offer(a)
    p.offer(make_chunk("d2", 0, B))
    assert a.to_wire() == before


def test_partners_with_as_many_values_per_category_go_first():
    for seed in range(5):
        p = processor(seed=seed)
        p.offer(make_chunk("d1", 0, "{ORG:Acme} and {ORG:Beta} in {LOC/GPE:Texas} in {DATETIME/DATE:May 2001}."))
        p.offer(make_chunk("d1", 1, "{ORG:Gamma} in {LOC/GPE:Ohio} in {DATETIME/DATE:June 2002}."))
        out = p.offer(make_chunk("d3", 0, "{ORG:Delta} in {LOC/GPE:Iowa} in {DATETIME/DATE:July 2003}."))
        assert out.log[1]["chunk_index"] == 1  # one Organization value, like d3


def test_after_a_refit_chunks_still_pair_with_those_waiting_in_the_old_version():
    p = processor()
    assert len(p.offer(make_chunk("d1", 0, A, model_version=1, component=0))) == 0  # waits in v1:c0
    stranger = make_chunk("d2", 0, B, model_version=2, component=3)
    assert len(p.offer(copy.deepcopy(stranger))) == 0  # no handover: waits in v2:c3, d1 stays stranded
    p2 = processor()
    p2.offer(make_chunk("d1", 0, A, model_version=1, component=0))
    handed = make_chunk("d2", 0, B, model_version=2, component=3)
    handed.cluster["previous"] = {"model_version": 1, "component": 0}
    out = p2.offer(handed)
    assert {r["action"] for r in out.log} == {"swapped"} and len(out.chunks) == 2
    contracts.validate("chunk-sanitized.v1.json", out.chunks[0].to_wire())
    other = make_chunk("d3", 0, A.replace("Siemens", "Bosch"), model_version=2, component=3)
    other.cluster["previous"] = {"model_version": 1, "component": 5}  # another old cluster: no partner there
    assert len(p2.offer(other)) == 0


def test_a_value_the_partner_shares_is_not_remembered_as_its_replacement():
    """doc0's "Danish" meets a partner that also says "Danish": it stays, but that is no replacement, so the
    document's later rare chunk "Danish." must still leave changed (found by the streaming property test)."""
    import random

    from anonstream.swap import InMemoryPoolStore, InMemoryTupleCounts, Release, SwapProcessor
    from anonstream.swap.testing import make_chunk

    chunks = [make_chunk("doc0", 1, "{DEM/NORP:Danish}.", component=1, chunk_count=2),
              make_chunk("doc1", 0, "{DATETIME/DATE:31 August 2006} {DEM/NORP:Danish}.", component=0, chunk_count=1),
              make_chunk("doc0", 0, "{DEM/NORP:Danish} {DEM/NORP:French}.", component=0, chunk_count=2)]
    obj = Release.default().to_dict()
    obj["pool"]["max_size"] = 1
    p = SwapProcessor(Release.from_dict(obj), InMemoryPoolStore(), InMemoryTupleCounts(), random.Random(0),
                      clock=lambda: 0.0)
    log = []
    for chunk in chunks:
        log += p.offer(chunk).log
    log += p.drain().log
    by_key = {r["chunk_key"]: r for r in log}
    assert by_key[chunks[0].key]["rare"]
    assert by_key[chunks[0].key]["action"] != "untouched"


def test_protect_none_leaves_an_unpaired_rare_chunk_as_it_came():
    """``protect: none`` is paper 000 as written: no rare-first protection, so at swap rate 0 a rare chunk that
    finds no partner keeps its values (``protect: rare`` generalizes them)."""
    import random

    from anonstream.swap import InMemoryPoolStore, InMemoryTupleCounts, Release, SwapProcessor
    from anonstream.swap.testing import make_chunk

    def run(protect):
        obj = Release.default().to_dict()
        obj["protect"], obj["swap_rate"], obj["generalized_kinds"] = protect, 0.0, []
        p = SwapProcessor(Release.from_dict(obj), InMemoryPoolStore(), InMemoryTupleCounts(), random.Random(0),
                          clock=lambda: 0.0)
        out = p.offer(make_chunk("doc0", 0, "He joined {ORG#court:Słupsk Regional Court}."))
        out.extend(p.drain())
        return out.chunks[0].text, out.log[0]

    text, record = run("none")
    assert text == "He joined Słupsk Regional Court." and record["rare"] and record["action"] == "untouched"
    text, record = run("rare")
    assert "Słupsk" not in text and record["action"] != "untouched"


def test_a_value_of_unknown_kind_is_generalized_not_swapped():
    """unknown_kinds: generalize (default): "organization" says only that the pii stage could not tell what
    sort of organisation it is, so no partner is known to be the same kind; the known kinds still swap."""
    a = "{ORG#organization:Ustawa} was cited by {ORG#court:Słupsk Regional Court} in {DATETIME/DATE:May 2001}."
    b = "{ORG#organization:Wildschut} was cited by {ORG#court:Erdek Civil Court} in {DATETIME/DATE:June 2003}."
    p = processor(release(generalized_kinds=[]))
    assert len(p.offer(make_chunk("d1", 0, a))) == 0
    out = p.offer(make_chunk("d2", 0, b))
    assert [c.text for c in out.chunks] == ["[Name] was cited by Słupsk Regional Court in June 2003.",
                                            "[Name] was cited by Erdek Civil Court in May 2001."]
    ops = {(c["category"], c["operator"]) for chunk in out.chunks for c in chunk.changes}
    assert ("Organization", "generalize") in ops and ("Organization", "swap") in ops


def test_unknown_kinds_swap_is_the_papers_behaviour():
    a = "{ORG#organization:Siemens} built a plant in {DATETIME/DATE:May 2001}."
    b = "{ORG#organization:Philips} opened an office in {DATETIME/DATE:June 2003}."
    p = processor(release(unknown_kinds="swap"))
    assert len(p.offer(make_chunk("d1", 0, a))) == 0
    out = p.offer(make_chunk("d2", 0, b))
    assert [c.text for c in out.chunks] == ["Siemens opened an office in June 2003.",
                                            "Philips built a plant in May 2001."]


def test_a_chunk_with_only_unknown_kinds_never_waits_for_a_partner():
    p = processor()
    out = p.offer(make_chunk("d1", 0, "{ORG#organization:Ustawa} was cited."))
    assert [c.text for c in out.chunks] == ["[Name] was cited."]
    assert [(r["action"], r["reason"]) for r in out.log] == [("generalized", "no_values")]


def test_an_acronym_standing_alone_never_takes_a_full_names_place():
    """"LO" whose expansion is in another chunk is no value for "the Polish-German Reconciliation Foundation":
    the acronym slot of a kind swaps with acronyms of that kind only; the full name finds no partner and is
    generalized to its kind."""
    a = "Proceedings before the {ORG#association:Polish-German Reconciliation Foundation} in {DATETIME/DATE:May 2001}."
    b = "Comments came from the {ORG#association:LO} in {DATETIME/DATE:June 2003}."
    c = "Comments came from the {ORG#association:SID} in {DATETIME/DATE:July 2004}."
    p = processor()
    assert len(p.offer(make_chunk("d1", 0, a))) == 0
    assert len(p.offer(make_chunk("d2", 0, b))) == 0  # no acronym of its kind waiting
    out = p.offer(make_chunk("d3", 0, c))
    assert sorted(ch.text for ch in out.chunks) == ["Comments came from the LO in July 2004.",
                                                    "Comments came from the SID in June 2003."]
    drained = p.drain()
    assert [ch.text for ch in drained.chunks] == ["Proceedings before the foundation in May 2001."]


def test_a_city_gives_way_only_to_a_city_of_its_country():
    """"lives in Izmir" never reads "lives in Bytów": a city's slot names its country (GeoNames); with no city of
    that country waiting, the city is generalized to its country, which is true."""
    a = "The applicant lives in {LOC/GPE#city:Izmir} since {DATETIME/DATE:May 2001}."
    b = "The applicant lives in {LOC/GPE#city:Bytów} since {DATETIME/DATE:June 2003}."
    c = "The applicant lives in {LOC/GPE#city:Kraków} since {DATETIME/DATE:July 2004}."
    p = processor()
    assert len(p.offer(make_chunk("d1", 0, a))) == 0
    assert len(p.offer(make_chunk("d2", 0, b))) == 0  # Izmir (Turkey) is no partner for Bytów (Poland)
    out = p.offer(make_chunk("d3", 0, c))
    assert sorted(ch.text for ch in out.chunks) == ["The applicant lives in Bytów since July 2004.",
                                                    "The applicant lives in Kraków since June 2003."]
    drained = p.drain()
    assert [ch.text for ch in drained.chunks] == ["The applicant lives in Turkey since May 2001."]


def test_an_organisation_gives_way_only_to_one_of_its_documents_country():
    """A Turkish university never becomes a Danish one: the pii stage records the country a place or an
    organisation belongs to, and the slot names it ("school in TR"); with none of its country waiting, the
    organisation is generalized to its kind."""
    a = "She was a student at {ORG#school:İnönü University} in {DATETIME/DATE:May 2001}."
    b = "She was a student at {ORG#school:University of Århus} in {DATETIME/DATE:June 2003}."
    c = "She was a student at {ORG#school:Ankara University} in {DATETIME/DATE:July 2004}."
    p = processor()
    assert len(p.offer(make_chunk("d1", 0, a, country="TR"))) == 0
    assert len(p.offer(make_chunk("d2", 0, b, country="DK"))) == 0  # no Danish school waiting
    out = p.offer(make_chunk("d3", 0, c, country="TR"))
    assert sorted(ch.text for ch in out.chunks) == ["She was a student at Ankara University in May 2001.",
                                                    "She was a student at İnönü University in July 2004."]
    drained = p.drain()
    assert [ch.text for ch in drained.chunks] == ["She was a student at the university in June 2003."]


def test_the_default_generalizes_the_institutions_a_place_names_even_when_a_partner_waits():
    """generalized_kinds (default: court, prosecutor, prison, police): "the Słupsk Regional Court" becomes "the
    regional court", which drops the place and stays true; a swap would name a court that had nothing to do with
    the case. The companies beside them still swap."""
    a = "The {ORG#court:Słupsk Regional Court} fined {ORG#company:Amber Sp. z o.o.} in {DATETIME/DATE:May 2001}."
    b = "The {ORG#court:Erdek Civil Court} fined {ORG#company:BG Bank A/S} in {DATETIME/DATE:June 2003}."
    p = processor()
    assert len(p.offer(make_chunk("d1", 0, a))) == 0
    out = p.offer(make_chunk("d2", 0, b))
    assert sorted(c.text for c in out.chunks) == ["The civil court fined Amber Sp. z o.o. in June 2003.",
                                                  "The regional court fined BG Bank A/S in May 2001."]
