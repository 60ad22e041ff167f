"""Tokenising: graphify-compatible query terms, label vocabulary tokens, stop words.

Two tokenisers live here on purpose:

* :func:`graphify_terms` splits a question exactly the way graphify's ``query`` does
  (whitespace split, Chinese runs cut into overlapping bigrams plus the whole run, short
  all-ASCII words dropped, stop words dropped unless nothing else is left). Seed scoring
  uses it so that our seeds agree with graphify's for the same query string.
* :func:`question_words` is our own, richer split used by the vocabulary expansion: it
  also drops CJK and more European function words and leaves CJK runs whole so they can
  be segmented against the graph's own vocabulary (see ``vocabulary.py``).

:func:`label_tokens` builds the vocabulary: letters-only runs of a label, split at
camelCase / snake_case and script (CJK / other) boundaries, lower-cased, 3–30 characters
(2–30 for CJK words, which are mostly two characters long). A camelCase word contributes
its parts and itself ("PyPI" gives "pypi"; "HTTPServer" gives "http", "server" and
"httpserver").
"""

from __future__ import annotations

import re
import unicodedata

_WORD_RE = re.compile(r"[^\W_]+")
_W_RE = re.compile(r"\w+")
_LETTER_RUN_RE = re.compile(r"[^\W\d_]+")

VOCAB_MIN = 3
VOCAB_MAX = 30
VOCAB_MIN_CJK = 2


def strip_diacritics(text: object) -> str:
    """NFKD-decompose and drop combining marks ("Café" -> "Cafe")."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def fold(text: object) -> str:
    """Diacritic-free lower case: the form labels and terms are compared in."""
    return strip_diacritics(text).lower()


def search_tokens(text: object) -> list[str]:
    """Word tokens of ``text`` (underscore and punctuation separate words)."""
    if text.__class__ is str and text.isascii() and text.replace(" ", "").isalnum():
        return text.lower().split()
    return _WORD_RE.findall(fold(text))


_HAN_RE = re.compile("[\u4e00-\u9fff]")
_CJK_CLASS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_RE = re.compile(f"[{_CJK_CLASS}]")
_CJK_SPLIT_RE = re.compile(f"([{_CJK_CLASS}]+)")


def has_han(text: str) -> bool:
    """Any CJK Unified Ideograph: the range graphify treats as Chinese."""
    return _HAN_RE.search(text) is not None


def is_cjk(ch: str) -> bool:
    """Han (incl. extension A and compatibility), kana and Hangul syllables."""
    return _CJK_RE.match(ch) is not None


def has_cjk(text: str) -> bool:
    return _CJK_RE.search(text) is not None


# --- stop words ---------------------------------------------------------------------
# QUERY_STOPWORDS is the question/filler list graphify's query drops (English, German,
# French, Spanish, Portuguese, Italian); it must stay the same set, or seeds would differ
# from graphify's for the same question. Words that are also common English / code terms
# ("war", "come", "con", "des", ...) are deliberately absent.
_EN = """how what why when where which who whom whose does did is are was were be been being
can could should would will shall may might must has have had the and but not for from with
without into onto off that this these those there here its their them they about any all some
work works working"""
_DE = """der die das den dem ein eine und oder nicht wie wer wann wo warum wieso welche welcher
welches ist sind wird wurde hat haben kann koennen können soll muss sich bei mit von fuer für
ueber über nach aus gibt es funktioniert geaendert geändert aendert ändert"""
_FR = "pourquoi quand quel quelle quels quelles quoi qui que est sont fonctionne cette dans avec où"
_ES = "cómo como qué cuál cuáles cuándo dónde donde porque por para funciona está están hay"
_PT = "qual quais quando onde são estão tem uma não"
_IT = "perché cosa quale quali dove funziona sono che della"
QUERY_STOPWORDS = frozenset(" ".join((_EN, _DE, _FR, _ES, _PT, _IT)).split())

# Extra function words used only by our expansion (never by graphify-compatible
# scoring): more English, Dutch, Russian, and CJK question/particle words.
_EXTRA_LATIN = """a an of to in on at by as or if so do done it me my our we you your he she his her
also than then into out up down over under more most such via per each other only same
tell show explain describe give list find about between among during before after
de het een en of van voor met niet hoe wat waarom wanneer waar welke
la le les un une du au aux et ou el los las lo del al y o en e il lo gli uno""".split()
_EXTRA_CYRILLIC = """как что почему когда где какой какая какие кто это и в во на с со по для из о об
ли же не да нет ещё еще или а но работает""".split()
EXPANSION_STOPWORDS = QUERY_STOPWORDS | frozenset(_EXTRA_LATIN) | frozenset(_EXTRA_CYRILLIC)

# CJK function words and question words, removed when a CJK run is segmented.
CJK_STOPWORDS = frozenset(
    """的 了 是 在 和 与 及 或 吗 呢 吧 啊 么 什么 怎么 怎样 怎么样 如何 为什么 为何 哪 哪些 哪个 谁 多少
    几 会 能 可以 有 没有 对 把 被 从 到 给 也 都 就 还 又 很 这 那 这个 那个 这些 那些 其 之 以 于 而 并
    请 告诉 我 你 他 她 它 我们 你们 他们 一个 一些 关于 之间 相关 情况 问题 是否 是不是 有没有
    の は が を に で と も へ や か な だ です ます する した される ある いる ない どう なぜ 何 なに どの どれ
    について とは という その この あの それ これ
    은 는 이 가 을 를 에 의 와 과 도 로 으로 에서 무엇 어떻게 왜 누구 어디 언제""".split()
)


def is_searchable(term: str) -> bool:
    """graphify keeps every non-ASCII-letter term, and ASCII-letter words longer than 2."""
    if all("a" <= ch <= "z" for ch in term):
        return len(term) > 2
    return True


def han_bigrams(text: str) -> list[str]:
    """Overlapping two-character windows, plus the whole run when it is longer than one.

    This is how graphify segments Chinese without a segmenter installed; a segmenter
    would change graphify's own seeds, so the compatible split never uses one.
    """
    segments = [text[i:i + 2] for i in range(len(text) - 1)] or [text]
    segments = [s for s in segments if s.strip()]
    if len(text) > 1 and text not in segments:
        segments.append(text)
    return segments


def graphify_terms(question: str) -> list[str]:
    """Query terms as graphify's ``query`` derives them (see module doc)."""
    terms: list[str] = []
    for raw in question.split():
        if has_han(raw):
            for seg in han_bigrams(raw.lower().strip()):
                seg = seg.strip()
                if seg and is_searchable(seg):
                    terms.append(seg)
        else:
            for tok in _W_RE.findall(raw.lower()):
                if is_searchable(tok):
                    terms.append(tok)
    content = [t for t in terms if t not in QUERY_STOPWORDS]
    return content or terms


def _camel_parts(word: str) -> list[str]:
    """Split a letters-only word at case changes: "HTTPServerError" -> HTTP, Server, Error."""
    if word.islower() or word.isupper() or not any(c.isupper() for c in word[1:]):
        return [word]
    parts: list[str] = []
    start = 0
    n = len(word)
    for i in range(1, n):
        prev, cur = word[i - 1], word[i]
        nxt = word[i + 1] if i + 1 < n else ""
        if cur.isupper() and (prev.islower() or (prev.isupper() and nxt.islower())):
            parts.append(word[start:i])
            start = i
    parts.append(word[start:])
    return [p for p in parts if p]


def token_fits(token: str) -> bool:
    n = len(token)
    if n > VOCAB_MAX:
        return False
    return n >= (VOCAB_MIN_CJK if has_cjk(token) else VOCAB_MIN)


def label_tokens(label: object) -> list[str]:
    """Vocabulary tokens of one node label (duplicates kept, in order)."""
    if not label:
        return []
    out: list[str] = []
    for run in _LETTER_RUN_RE.findall(str(label)):
        for text, cjk in split_cjk_runs(run):
            whole = text.lower()
            if token_fits(whole):
                out.append(whole)
            if cjk:
                continue
            parts = _camel_parts(text)
            if len(parts) > 1:
                for part in parts:
                    tok = part.lower()
                    if token_fits(tok):
                        out.append(tok)
    return out


def split_cjk_runs(word: str) -> list[tuple[str, bool]]:
    """Cut a word into alternating (text, is_cjk) pieces."""
    if word.isascii():
        return [(word, False)] if word else []
    return [(piece, i % 2 == 1) for i, piece in enumerate(_CJK_SPLIT_RE.split(word)) if piece]


def camel_parts(word: str) -> list[str]:
    """Lower-cased camelCase parts of a word (the word itself when it has none)."""
    return [p.lower() for p in _camel_parts(word)]


def question_words(question: str) -> list[tuple[str, bool]]:
    """Words of a question for expansion: ``(word, is_cjk_run)``, stop words removed.

    Non-CJK words are letter runs in their original case (the expander tries the whole
    word, then its camelCase parts); CJK runs stay whole (the expander segments them
    against the vocabulary). When every non-CJK word is a stop word they are all kept,
    like graphify's fallback.
    """
    words: list[tuple[str, bool]] = []
    for run in _LETTER_RUN_RE.findall(question):
        words.extend(split_cjk_runs(run))
    content = [(w, c) for w, c in words if c or w.lower() not in EXPANSION_STOPWORDS]
    return content or words
