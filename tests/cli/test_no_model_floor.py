"""The relevance floor of the no-model answer on a graph whose common words are nodes (a parse
of encyclopaedic text: *creator*, *weather*), through the real CLI. What each question should
get is read off the unit file by hand: a question written around a word no unit uses in any
form ("zorblatt", "tomorrow") is not in the graph, though it shares a common word with a node;
a question whose words the graph uses (the asked kind "month" aside) is answered. On main the
two were a match citing *creator [is] Maurice Kanbar* and the weather units."""

from __future__ import annotations

import pytest

from tests.cli.test_no_model_ranking import cli  # noqa: F401  (the real CLI over a fresh data directory)

UNITS = """#c1 {creator} [is] {Maurice Kanbar}
#c3 {Healing} [created by] {Kondo}
#w1 {weather} [ranges to maximum in] {June}
#w2 {weather} [ranges to minimum in] {January}
#k1 {Kassel} [is] {capital}
"""


def _ingested(cli, tmp_path, name: str, text: str):
    """The CLI fixture after ``kg ingest`` of ``text`` (a units file)."""
    units = tmp_path / name
    units.write_text(text, "utf-8")
    cli("ingest", str(units))
    return cli


@pytest.fixture()
def graph(cli, tmp_path):
    return _ingested(cli, tmp_path, "parse.units", UNITS)


@pytest.mark.parametrize("question", ["Who created the zorblatt?", "What is the weather tomorrow?"])
def test_a_question_around_a_word_the_graph_never_uses_is_not_in_the_graph(graph, question):
    data = graph("ask", question, "--json")
    assert data["found"] is False and data["cited"] == [], data["cited"]


@pytest.mark.parametrize("question, first", [
    ("Who created Healing?", "c3"),
    ("Who is the creator?", "c1"),
    # "month" is the asked kind, which the graph need not use
    ("In which month does the weather range to its maximum?", "w1"),
])
def test_a_question_whose_words_the_graph_uses_is_answered(graph, question, first):
    data = graph("ask", question, "--json")
    assert data["found"] is True and data["cited"][0] == first, data["cited"]


# MuSiQue's rules graph refused "Which continent has the lowest average temperature?" because no
# unit uses "lowest" nor its stem: the graph writes *low*, of which "lowest" is a form only the
# lemmatiser undoes. A word of the same shape the graph lacks in every form stays refused.
FORMS = """#a1 {annual average temperature} [is a] {relatively continuous 26 °C}
#a2 {Antarctica} [is] {continent of low rainfall}
#a3 {continent} [includes] {Madagascar}
"""


@pytest.fixture()
def forms(cli, tmp_path):
    return _ingested(cli, tmp_path, "forms.units", FORMS)


def test_a_superlative_of_a_word_the_graph_uses_is_no_stranger(forms):
    data = forms("ask", "Which continent has the lowest average temperature?", "--json")
    assert data["found"] is True and data["cited"], data


def test_a_superlative_of_a_word_the_graph_never_uses_stays_refused(forms):
    data = forms("ask", "Which continent has the bluest average temperature?", "--json")
    assert data["found"] is False and data["cited"] == [], data["cited"]
