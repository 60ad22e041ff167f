"""Vocabulary-constrained query expansion, without an LLM.

graphify's skills ask an LLM to pick at most 12 tokens for a question from the graph's
own label vocabulary before running ``graphify query``, so that a question in other words
or another language still lands on the graph. We do the same deterministically and only
ever emit tokens that exist in the vocabulary:

1. the question's own words that are vocabulary tokens (CJK runs are segmented against
   the vocabulary by forward maximum matching, so no segmenter is needed);
2. morphology: plural / -ing / -ed / diacritic variants of words that are not tokens;
3. synonym closure: labels in the ≡ class (links of kind ``synonym``) of every node the
   question names: across languages toward the graph's majority script ("吸烟" brings
   "smoking" in an English-majority graph), and one-word aliases in the same script
   ("chronic obstructive pulmonary disease" brings "copd");
4. belongs-to: when steps 1–3 found nothing, the labels of the named nodes' direct
   super-classes and their ≡ classes ("猫" → "哺乳动物" ≡ "mammal").

An LLM chooser can replace steps 2–4 (``choose_with_llm``); its picks are filtered
through the same vocabulary check.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass, field

from kgservice.graphify.loader import Graph
from kgservice.graphify.terms import (
    CJK_STOPWORDS,
    EXPANSION_STOPWORDS,
    VOCAB_MAX,
    camel_parts,
    fold,
    has_cjk,
    label_tokens,
    question_words,
    strip_diacritics,
    token_fits,
)

MAX_TOKENS = 12
_CJK_LINE_RE = re.compile("^[^\n]*[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]", re.M)

SYNONYM_KINDS = {"synonym"}
BELONGS_KINDS = {"belongs_to"}
# Relation names that mean ≡ / is-a in graphs written without our `kind` field.
_SYNONYM_RELATIONS = {"same as", "aka", "also known as", "alias", "alias of", "synonym", "synonym of",
                      "equivalent to", "同义", "同义词", "又称", "别名", "即"}
_BELONGS_RELATIONS = {"is a", "is_a", "isa", "subclass of", "instance of", "type of", "kind of",
                      "inherits", "extends", "属于", "是一种"}


class Vocabulary:
    """Tokens of every node label, checked lazily against one joined, lower-cased text.

    Membership is exact (a token is in the vocabulary iff tokenising some label yields
    it) but costs only the labels that contain the candidate as a substring.
    """

    def __init__(self, labels: list[str]):
        from itertools import accumulate

        self.labels = labels
        lowered = [lab.lower() for lab in labels]
        self.text = "\n".join(lowered)
        self.starts = list(accumulate((len(t) + 1 for t in lowered), initial=0))[:-1] if lowered else []
        self._known: dict[str, bool] = {}
        self._all: set[str] | None = None
        self._cjk_majority: bool | None = None

    @classmethod
    def of(cls, g: Graph) -> "Vocabulary":
        v = g.cache.get("vocab")
        if v is None:
            attrs = g.attrs
            labels = [lab if lab.__class__ is str else str(lab)
                      for lab in (attrs[nid].get("label") for nid in g.order) if lab]
            labels = [lab.replace("\n", " ") if "\n" in lab else lab for lab in labels]
            v = cls(labels)
            g.cache["vocab"] = v
        return v

    def __contains__(self, token: str) -> bool:
        hit = self._known.get(token)
        if hit is not None:
            return hit
        if self._all is not None:
            hit = token in self._all
        else:
            hit = False
            if token and token_fits(token) and "\n" not in token:
                text, starts = self.text, self.starts
                pos = text.find(token)
                while pos != -1:
                    i = bisect_right(starts, pos) - 1
                    if token in label_tokens(self.labels[i]):
                        hit = True
                        break
                    nxt = starts[i + 1] if i + 1 < len(starts) else -1
                    if nxt < 0:
                        break
                    pos = text.find(token, nxt)
        self._known[token] = hit
        return hit

    def cjk_majority(self) -> bool:
        """True when most labels are written in CJK script."""
        if self._cjk_majority is None:
            cjk = len(_CJK_LINE_RE.findall(self.text))
            self._cjk_majority = cjk * 2 > len(self.labels)
        return self._cjk_majority

    def all_tokens(self) -> set[str]:
        if self._all is None:
            toks: set[str] = set()
            for lab in self.labels:
                toks.update(label_tokens(lab))
            self._all = toks
        return self._all


# --- morphology -----------------------------------------------------------------------


def variants(word: str) -> list[str]:
    """Inflection variants of a word, most likely first (English first, then generic)."""
    w = word
    out: list[str] = []

    def add(x: str) -> None:
        if x and x != w and x not in out:
            out.append(x)

    folded = strip_diacritics(w)
    add(folded)
    if w.endswith("ies") and len(w) > 4:
        add(w[:-3] + "y")
    if w.endswith("ses") or w.endswith("xes") or w.endswith("ches") or w.endswith("shes") or w.endswith("zes"):
        add(w[:-2])
    if w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        add(w[:-1])
    if w.endswith("ing") and len(w) > 5:
        stem = w[:-3]
        add(stem)
        add(stem + "e")
        if len(stem) > 2 and stem[-1] == stem[-2]:
            add(stem[:-1])
    if w.endswith("ed") and len(w) > 4:
        stem = w[:-2]
        add(stem)
        add(w[:-1])
        if len(stem) > 2 and stem[-1] == stem[-2]:
            add(stem[:-1])
        if stem.endswith("i"):
            add(stem[:-1] + "y")
    if w.endswith("y") and len(w) > 3:
        add(w[:-1] + "ies")
    if not w.endswith("s"):
        add(w + "s")
        add(w + "es")
    if w.endswith("e"):
        add(w[:-1] + "ing")
        add(w + "d")
    else:
        add(w + "ing")
        add(w + "ed")
    # generic European plural / case endings (German -en/-n/-e, French -x)
    for suf in ("en", "n", "e", "x", "er"):
        if w.endswith(suf) and len(w) - len(suf) >= 4:
            add(w[: -len(suf)])
    return out


# --- synonym / belongs-to structure ---------------------------------------------------------


def _relation_kind(relation: object, memo: dict[object, str]) -> str:
    kind = memo.get(relation)
    if kind is None:
        rel = str(relation or "").strip().lower()
        kind = "synonym" if rel in _SYNONYM_RELATIONS else "belongs_to" if rel in _BELONGS_RELATIONS else ""
        memo[relation] = kind
    return kind


@dataclass
class Relations:
    syn_class: dict[str, list[str]] = field(default_factory=dict)  # node -> its ≡ class (sorted)
    parents: dict[str, list[str]] = field(default_factory=dict)  # node -> direct super-classes
    label_index: dict[str, list[str]] = field(default_factory=dict)  # folded label -> nodes


def relations(g: Graph) -> Relations:
    rel = g.cache.get("relations")
    if rel is not None:
        return rel
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        root = x
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(x, x) != root:
            parent[x], x = root, parent[x]
        return root

    parents: dict[str, list[str]] = {}
    memo: dict[object, str] = {}
    links = g.links
    kinds = [lk.data.get("kind") for lk in links]
    wanted = SYNONYM_KINDS | BELONGS_KINDS
    picked = [i for i, k in enumerate(kinds) if k in wanted]
    untyped = [i for i, k in enumerate(kinds) if k is None]
    if untyped:
        rels = [links[i].data.get("relation") for i in untyped]
        try:
            distinct = set(rels)
        except TypeError:  # an unhashable relation value: compare as text
            rels = [str(r) for r in rels]
            distinct = set(rels)
        typed = {r for r in distinct if _relation_kind(r, memo)}
        if typed:
            for i, r in zip(untyped, rels, strict=True):
                if r in typed:
                    kinds[i] = memo[r]
                    picked.append(i)
            picked.sort()
    for i in picked:
        lk = links[i]
        d = lk.data
        kind = kinds[i]
        if d.get("modifier"):
            continue
        if kind in SYNONYM_KINDS:
            a, b = find(lk.src), find(lk.tgt)
            if a != b:
                parent[max(a, b)] = min(a, b)
            parent.setdefault(lk.src, lk.src)
            parent.setdefault(lk.tgt, lk.tgt)
        elif kind in BELONGS_KINDS and lk.src != lk.tgt:
            ps = parents.setdefault(lk.src, [])
            if lk.tgt not in ps:
                ps.append(lk.tgt)
    classes: dict[str, list[str]] = {}
    for x in list(parent):
        classes.setdefault(find(x), []).append(x)
    syn_class = {}
    for members in classes.values():
        members.sort()
        for m in members:
            syn_class[m] = members
    label_index: dict[str, list[str]] = {}
    for nid in set(syn_class) | set(parents):
        label_index.setdefault(fold(g.label(nid)).strip(), []).append(nid)
    rel = Relations(syn_class, parents, label_index)
    g.cache["relations"] = rel
    return rel


# --- the expansion ------------------------------------------------------------------------


@dataclass
class Expansion:
    tokens: list[str]
    direct: list[str]  # question words found in the vocabulary as they are
    morphology: list[str]
    synonyms: list[str]
    broader: list[str]
    named_nodes: list[str]  # nodes the question names (for ≡ / belongs-to)
    chooser: str = "graph"

    @property
    def query_string(self) -> str:
        return " ".join(self.tokens)


def _segment_cjk(run: str, vocab: Vocabulary) -> list[str]:
    """Forward maximum matching of a CJK run against the vocabulary; stop words dropped."""
    out: list[str] = []
    i, n = 0, len(run)
    while i < n:
        hit = ""
        for j in range(min(n, i + VOCAB_MAX), i + 1, -1):
            piece = run[i:j]
            if piece.lower() in vocab:
                hit = piece
                break
        if hit:
            out.append(hit.lower())
            i += len(hit)
        else:
            i += 1
    return [t for t in out if t not in CJK_STOPWORDS]


def _question_phrases(question: str) -> list[str]:
    """Folded n-grams (1..6 words) of the question plus its CJK runs, for node lookup."""
    words = re.findall(r"[^\W_]+(?:[-'.][^\W_]+)*", fold(question))
    phrases: list[str] = []
    for n in range(min(6, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            phrases.append(" ".join(words[i:i + n]))
    return phrases


def named_nodes(g: Graph, question: str, tokens: list[str]) -> list[str]:
    """Nodes with synonym / belongs-to links that the question names by label."""
    rel = relations(g)
    if not rel.label_index:
        return []
    found: list[str] = []
    seen: set[str] = set()

    def take(key: str) -> None:
        for nid in rel.label_index.get(key, []):
            if nid not in seen:
                seen.add(nid)
                found.append(nid)

    q = fold(question)
    for phrase in _question_phrases(question):
        take(phrase)
    for t in tokens:
        take(t)
    # CJK labels sit inside unsegmented text: look them up as substrings
    if has_cjk(q):
        for key in rel.label_index:
            if key and has_cjk(key) and key in q:
                take(key)
    return found


def expand(g: Graph, question: str, max_tokens: int = MAX_TOKENS) -> Expansion:
    vocab = Vocabulary.of(g)
    direct: list[str] = []
    morph: list[str] = []
    for word, cjk in question_words(question):
        if cjk:
            direct.extend(_segment_cjk(word, vocab))
            continue
        w = word.lower()
        if w in vocab:
            direct.append(w)
            continue
        parts = camel_parts(word)
        for part in parts if len(parts) > 1 else [w]:
            if part in EXPANSION_STOPWORDS:
                continue
            if part in vocab:
                direct.append(part)
                continue
            for v in variants(part):
                if v in vocab and v not in EXPANSION_STOPWORDS:
                    morph.append(v)
                    break
    direct = list(dict.fromkeys(direct))
    morph = [t for t in dict.fromkeys(morph) if t not in direct]

    named = named_nodes(g, question, direct + morph)
    rel = relations(g)
    synonyms: list[str] = []
    broader: list[str] = []
    have = set(direct) | set(morph)

    def add_tokens(label: str, into: list[str]) -> None:
        for t in label_tokens(label):
            if t not in have and t not in EXPANSION_STOPWORDS and t in vocab:
                have.add(t)
                into.append(t)

    for nid in named:
        own_cjk = has_cjk(g.label(nid))
        for member in rel.syn_class.get(nid, []):
            if member == nid:
                continue
            label = g.label(member)
            member_cjk = has_cjk(label)
            if member_cjk != own_cjk:
                # across languages: toward the graph's majority script
                if member_cjk == vocab.cjk_majority():
                    add_tokens(label, synonyms)
            elif len(label_tokens(label)) == 1:
                add_tokens(label, synonyms)  # a one-word alias in the same script
    # super-classes only when nothing else of the question is in the vocabulary
    for nid in named if not (direct or morph or synonyms) else []:
        for p in rel.parents.get(nid, []):
            for member in [p] + [m for m in rel.syn_class.get(p, []) if m != p]:
                add_tokens(g.label(member), broader)
    tokens = (direct + morph + synonyms + broader)[:max_tokens]
    return Expansion(tokens, direct, morph, synonyms, broader, named)


# --- optional LLM chooser -------------------------------------------------------------------

_LLM_PROMPT = """You expand a question into search tokens for a knowledge graph.
Pick at most {k} tokens from the VOCABULARY below that match the question's intent,
translating across languages and word forms when needed. Use ONLY tokens listed in the
vocabulary, exactly as written; never invent one. If nothing fits, return [].
Answer with a JSON list of strings only.

QUESTION: {question}
VOCABULARY: {vocab}
"""


def choose_with_llm(g: Graph, question: str, model: str, complete=None, max_tokens: int = MAX_TOKENS,
                    vocab_limit: int = 4000) -> Expansion:
    """Let an LLM choose the tokens; its picks are kept only if they are vocabulary tokens.

    ``complete(model, prompt) -> str`` defaults to litellm (imported here, lazily).
    """
    base = expand(g, question, max_tokens)
    vocab = Vocabulary.of(g)
    all_tokens = sorted(vocab.all_tokens())
    if len(all_tokens) > vocab_limit:
        # keep the tokens nearest the question first: the deterministic picks, then the rest
        head = [t for t in base.tokens if t in vocab]
        rest = [t for t in all_tokens if t not in set(head)]
        all_tokens = head + rest[: vocab_limit - len(head)]
    prompt = _LLM_PROMPT.format(k=max_tokens, question=question, vocab=", ".join(all_tokens))
    if complete is None:
        def complete(model_name: str, text: str) -> str:
            import litellm  # heavy: only when the LLM chooser is asked for

            resp = litellm.completion(model=model_name, messages=[{"role": "user", "content": text}])
            return resp.choices[0].message.content or ""
    reply = complete(model, prompt)
    m = re.search(r"\[.*\]", reply or "", re.S)
    picked: list[str] = []
    if m:
        try:
            raw = json.loads(m.group(0))
        except ValueError:
            raw = []
        for t in raw if isinstance(raw, list) else []:
            t = str(t).strip().lower()
            if t and t in vocab and t not in picked:
                picked.append(t)
    picked = picked[:max_tokens]
    return Expansion(picked, [t for t in picked if t in base.direct], [], [t for t in picked if t not in base.direct],
                     [], base.named_nodes, chooser="llm")
