"""The no-LLM entry step (kgservice/entry) and score fusion: doctests of the pure parts, and the
step over a real embedded store with weights worked out by hand."""

from __future__ import annotations

import doctest
import math

import pytest

import kgservice.entry.match as match
import kgservice.entry.spelling as spelling
import kgservice.entry.step as step
import kgservice.expansion.fusion as fusion
from kgservice.entry import EntryFinder, EntryParams
from kgservice.notation import parse_units
from kgservice.stores.embedded import EmbeddedStore

UNITS = """\
#u1 {Germany} [has] {Berlin}
#u2 {Germany} [has] {Munich}
#u3 {Germany} [is a] {country}
#u4 {Hank Snow} [performed] {Hello Love}
#u5 {Hank Snow} [lived in] {Nashville}
#u6 {吸烟} [导致] {肺癌}
#u7 {country} [has] {border}
"""


@pytest.mark.parametrize("module", [match, step, fusion, spelling])
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


def _stored(path, text: str, lexicon, doc: str):
    """An embedded store holding ``text``'s units, closed when the test ends."""
    s = EmbeddedStore(path)
    s.ingest(parse_units(text, lexicon, doc=doc))
    yield s
    s.close()


@pytest.fixture
def store(tmp_path, lexicon):
    yield from _stored(tmp_path / "g", UNITS, lexicon, "t.units")


def spec(m: int) -> float:
    return 1 / (1 + math.log(m))


def test_names_weighted_by_specificity(store):
    f = EntryFinder(store)
    r = f.find("Did Hank Snow live in Germany?")
    # germany: subject of u1 u2 u3 -> 3 mentions; hank snow: u4 u5 -> 2; best seed scaled to 1
    assert {n.node: n.mentions for n in r.nodes} == {"hank snow": 2, "germany": 3}
    assert r.seeds == pytest.approx({"hank snow": 1.0, "germany": spec(3) / spec(2)}, abs=1e-6)
    assert [n.named for n in r.nodes] == ["hank snow", "germany"]


def test_lower_case_words_yield_to_names(store):
    f = EntryFinder(store)
    # "country" and "border" are nodes, but the question also names Germany: they weigh common_weight (0)
    assert f.find("Which country shares a border with Germany?").named == ["germany"]
    r = f.find("Which country shares a border with Germany?", params=EntryParams(use_vectors=False, common_weight=0.5))
    # germany 1 * spec(3); country 0.5 * spec(2: u3 context, u7 subject); border 0.5 * spec(1) = 0.5
    raw = {"germany": spec(3), "country": 0.5 * spec(2), "border": 0.5}
    top = max(raw.values())
    assert r.seeds == pytest.approx({k: v / top for k, v in raw.items()}, abs=1e-6)
    # with no name-like span at all, every named node counts fully
    assert sorted(f.find("which country has a border?").named) == ["border", "country"]


def test_chinese_without_spaces(store):
    r = EntryFinder(store).find("吸烟最终会导致什么？")
    assert r.named == ["吸烟"] and r.nodes[0].named == "吸 烟"


def test_index_follows_the_store(store, lexicon):
    f = EntryFinder(store)
    assert f.find("Where is Linville Falls?").nodes == []
    store.ingest(parse_units("#u8 {Linville Falls} [located in] {Avery County}\n", lexicon, doc="more.units"))
    assert f.find("Where is Linville Falls?").named == ["linville falls"]


def test_vector_hits_fused_below_names(store, tmp_path):
    """A vector hit weighs cosine * vector_weight * specificity: with a fake vector store whose
    cosines are given, the arithmetic is checked by hand."""

    class Vectors:
        def search(self, vec, top_k, threshold):
            return [("nashville", 0.8), ("berlin", 0.4)]

    f = EntryFinder(store, embed=lambda texts: [[0.0]], vectors=Vectors())
    r = f.find("Did Hank Snow perform in Tennessee?", params=EntryParams(threshold=0.5))
    # hank snow named: 1 * spec(2); nashville (1 mention) 0.8 * 0.5 * 1 = 0.4; berlin below the threshold is the
    # store's job (the fake returns it anyway, so it enters: 0.4 * 0.5 * 1)
    raw = {"hank snow": spec(2), "nashville": 0.4, "berlin": 0.2}
    top = max(raw.values())
    assert r.seeds == pytest.approx({k: v / top for k, v in raw.items()}, abs=1e-6)
    assert {n.node: n.cosine for n in r.nodes} == {"hank snow": None, "nashville": 0.8, "berlin": 0.4}


def test_exact_label_ranks_above_cross_language_synonym(tmp_path, lexicon):
    # tobacco is named by many units (low specificity); its Chinese synonym by one, and the
    # vectors find both: the synonym's weight (cosine x vector_weight x 1) beats the frequent
    # exact name's specificity, yet the node the text names exactly is listed first
    text = "".join(f"#t{i} {{tobacco}} [causes] {{disease {i}}}\n" for i in range(6)) + "#z1 {烟草} [导致] {肺癌}\n"
    s = EmbeddedStore(tmp_path / "g")
    s.ingest(parse_units(text, lexicon, doc="t.units"))
    try:
        r = EntryFinder(s).find("tobacco", hits=[("烟草", 0.95), ("tobacco", 0.9)])
        w = r.seeds
        assert w["烟草"] > w["tobacco"]  # the weights are unchanged: only the order is
        assert [n.node for n in r.nodes][:2] == ["tobacco", "烟草"]
        # a question that merely contains the label is ranked by weight as before
        r2 = EntryFinder(s).find("what does tobacco cause", hits=[("烟草", 0.95), ("tobacco", 0.9)])
        assert [n.node for n in r2.nodes][0] == "烟草"
    finally:
        s.close()


WORDING = """\
#w1 {Big Eyes} [directed by] {Tim Burton}
#w2 {Tim Burton} [married] {Helena Bonham Carter}
#w3 {Gila monster} [found in] {Sonoran Desert}
#w4 {Monster Trucks (film)} [set in] {North Dakota}
#w5 {Friedrich Hayek} [studied at] {University of Vienna}
#w6 {the world} [has] {oceans}
#w7 {World Series} [won by] {Boston Red Sox}
#w8 {director} [makes] {film}
#w9 {European Union} [has] {euro}
#w10 {European Council} [part of] {European Union}
#w11 {European Court} [part of] {European Union}
#w12 {European Parliament} [part of] {European Union}
#w13 {Talk About a Stranger} [directed by] {David Bradley}
#w14 {Rocky II} [followed by] {Rocky III}
"""


@pytest.fixture
def worded(tmp_path, lexicon):
    yield from _stored(tmp_path / "w", WORDING, lexicon, "w.units")


def test_a_name_written_differently_still_names_its_node(worded):
    f = EntryFinder(worded)
    # the possessive splits "Big Eye's" into big, eye, s: with the "s" it is Big Eyes, a name, so the
    # lower-case "director" yields to it (common_weight 0)
    assert f.find("Who is the spouse of Big Eye's main director?").named == ["big eyes"]
    # a plural in the question meets a singular label; not the other way round (a plural label is a set)
    assert f.find("Where are Gila monsters found?").named == ["gila monster"]
    # a label's trailing qualifier is not part of the name the question writes
    assert f.find("Where is Monster Trucks set?").named == ["monster trucks (film)"]
    # "the world" matches inside "the World Series" too, but its "the" belongs to the longer name
    assert f.find("Who won the World Series?").named == ["world series"]


def test_part_of_a_longer_name(worded):
    f = EntryFinder(worded)
    r = f.find("Where did Hayek study?", params=EntryParams(use_vectors=False))
    # no label is "Hayek"; one label written as a name holds it: a partial match, weighed
    # partial_weight x specificity (1 mention), the only seed, so scaled to 1
    assert r.named == ["friedrich hayek"] and r.nodes[0].named == "hayek" and r.seeds == {"friedrich hayek": 1.0}
    assert f.find("Where did Hayek study?", params=EntryParams(use_vectors=False, partial_weight=0.0)).nodes == []
    # the weight applies before the scaling: next to a full name it shows
    r2 = f.find("Did Hayek or Tim Burton win the World Series?", params=EntryParams(use_vectors=False, partial_weight=0.5))
    raw = {"friedrich hayek": 0.5 * spec(1), "tim burton": spec(2), "world series": spec(1)}
    assert r2.seeds == pytest.approx({k: v / max(raw.values()) for k, v in raw.items()}, abs=1e-6)
    # four labels hold "European" alike: too ambiguous to pick one
    assert f.find("Which European country uses it?", params=EntryParams(use_vectors=False)).nodes == []


def test_title_case_and_lower_case_questions_find_a_label_written_otherwise(worded):
    # a question that writes a title in Title Case ("A", "Ii") or all in lower case still names
    # the label as the graph writes it: labels and questions meet on case-folded tokens
    f = EntryFinder(worded)
    p = EntryParams(use_vectors=False)
    assert f.find("Who directed Talk About A Stranger?", params=p).named == ["talk about a stranger"]
    assert f.find("What came after Rocky Ii?", params=p).named == ["rocky ii"]
    assert f.find("what came after rocky ii", params=p).named == ["rocky ii"]
    assert f.find("WHO DIRECTED TALK ABOUT A STRANGER?", params=p).named == ["talk about a stranger"]


NAMESAKES = """\
#n1 {Silverton} [has] {silver mine}
#n2 {Emil Fischer} [died in] {Silverton, Colorado}
#n3 {Big Eyes} [directed by] {Tim Burton}
#n4 {Big Eyes (film)} [stars] {Amy Adams}
#n5 {Big Eyes (band)} [formed in] {Brooklyn}
#n6 {The Oddventures of Mr. Cool} [album by] {Francis Magalona}
#n7 {Paris} [capital of] {France}
#n8 {Paris, Texas} [seat of] {Lamar County}
#n9 {Paris (band)} [formed in] {1993}
#n10 {Paris, Ontario} [part of] {Brant County}
#n11 {Paris (2008 film)} [directed by] {Cédric Klapisch}
#n12 {the world} [has] {oceans}
#n13 {Rochester} [has] {university}
#n14 {Rochester} [lies on] {Genesee River}
#n15 {Kodak} [based in] {Rochester}
#n16 {George Eastman} [died in] {Rochester, New York}
"""


@pytest.fixture
def namesakes(tmp_path, lexicon):
    yield from _stored(tmp_path / "n", NAMESAKES, lexicon, "n.units")


def test_a_name_finds_its_namesakes_with_a_disambiguator(namesakes):
    f = EntryFinder(namesakes)
    p = EntryParams(use_vectors=False)
    # "Silverton" is a node and so is "Silverton, Colorado", whose unit says where Fischer died:
    # both are seeds, each mentioned by one unit, so both weigh 1
    r = f.find("Where is Silverton?", params=p)
    assert r.seeds == {"silverton": 1.0, "silverton, colorado": 1.0}
    assert f.find("Where is Silverton?", params=EntryParams(use_vectors=False, namesake_weight=0.0)).named == ["silverton"]
    # the question writes a qualifier's word ("film"): that namesake only, not the band
    assert set(f.find("Who directed the film Big Eyes?", params=p).named) == {"big eyes", "big eyes (film)"}
    assert set(f.find("Who is Big Eyes?", params=p).named) == {"big eyes", "big eyes (film)", "big eyes (band)"}
    # a namesake never outweighs the node the question names: Rochester is mentioned by 3 units,
    # Rochester, New York by 1; by specificity alone they would weigh spec(3) : 1, scaled
    # to spec(3) and 1; capped at Rochester's, both weigh spec(3), scaled to 1
    assert f.find("Where is Rochester?", params=p).seeds == pytest.approx({"rochester": 1.0, "rochester, new york": 1.0})
    # four things share the name Paris: none is added to the Paris the question names
    assert f.find("Which country is Paris the capital of?", params=p).named == ["paris"]


def test_a_title_written_without_its_leading_the(namesakes):
    f = EntryFinder(namesakes)
    p = EntryParams(use_vectors=False)
    # written in lower case, the name is no partial match of a longer name (those are read
    # from capitalised words): the label less its leading "the" finds it
    assert f.find("who made oddventures of mr. cool", params=p).named == ["the oddventures of mr. cool"]
    assert f.find("Who made The Oddventures of Mr. Cool?", params=p).named == ["the oddventures of mr. cool"]
    # a lower-case label is a phrase, not a title: its noun alone does not name it
    assert f.find("How big is our world?", params=p).named == []
