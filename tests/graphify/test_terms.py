"""Tokenising: graphify-compatible query terms, vocabulary tokens, question words."""

from kgservice.graphify.terms import (
    graphify_terms,
    han_bigrams,
    label_tokens,
    question_words,
    search_tokens,
    strip_diacritics,
)


def test_stop_words_are_dropped_in_several_languages():
    assert graphify_terms("how does the frontier cache work") == ["frontier", "cache"]
    assert graphify_terms("Wie funktioniert der Parser?") == ["parser"]
    assert graphify_terms("pourquoi le cache est lent") == ["cache", "lent"]  # "le" is too short
    assert graphify_terms("¿Cómo funciona el índice?") == ["índice"]


def test_all_stop_words_fall_back_to_the_words():
    assert graphify_terms("how does it work") == ["how", "does", "work"]  # "it" is too short


def test_short_ascii_words_are_dropped_but_not_other_scripts():
    assert graphify_terms("an io api of x") == ["api"]
    assert graphify_terms("я и он") == ["я", "и", "он"]


def test_chinese_runs_become_bigrams_plus_the_run():
    assert han_bigrams("吸烟") == ["吸烟"]
    assert han_bigrams("吸烟危害") == ["吸烟", "烟危", "危害", "吸烟危害"]
    assert graphify_terms("吸烟危害 smoking") == ["吸烟", "烟危", "危害", "吸烟危害", "smoking"]


def test_search_tokens_split_on_punctuation_and_underscore_and_fold_accents():
    assert search_tokens("graph-first_guard.py") == ["graph", "first", "guard", "py"]
    assert search_tokens("Café Crème") == ["cafe", "creme"]
    assert search_tokens("foo bar") == ["foo", "bar"]
    assert strip_diacritics("Łódź") == "Łodz"  # Ł has no decomposition


def test_label_tokens_split_camel_snake_and_script():
    assert label_tokens("HTTPServerError") == ["httpservererror", "http", "server", "error"]
    assert label_tokens("snake_case_name") == ["snake", "case", "name"]
    assert label_tokens("PyPI") == ["pypi"]  # the parts "py" and "pi" are too short
    assert label_tokens("Python包索引") == ["python", "包索引"]
    assert label_tokens("Python 3.12") == ["python"]
    assert label_tokens("吸烟") == ["吸烟"]  # CJK words count from two characters
    assert label_tokens("猫") == []
    assert label_tokens("a" * 31) == []
    assert label_tokens("") == [] and label_tokens(None) == []


def test_question_words_keep_cjk_runs_whole_and_drop_function_words():
    assert question_words("What causes lung cancer?") == [("causes", False), ("lung", False), ("cancer", False)]
    assert question_words("吸烟会导致什么疾病") == [("吸烟会导致什么疾病", True)]
    assert question_words("PyPI 的用途") == [("PyPI", False), ("的用途", True)]
    assert question_words("how does it work") == [("how", False), ("does", False), ("it", False), ("work", False)]
