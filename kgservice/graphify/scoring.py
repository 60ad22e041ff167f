"""Node matching and scoring with graphify's semantics.

Two matchers, both reproducing what graphify's CLI decides so that the same graph.json
gives the same seeds, path endpoints and explain targets:

* **Tiered name matching** (:func:`find_node_tiers`) for ``explain`` and path
  endpoints: source-file path → exact label / id → prefix → substring, plus the
  ``path::symbol`` and dotted ``pkg.mod.func`` forms.
* **IDF-weighted scoring** (:func:`score_query`) for ``query`` seeds and fuzzy path
  endpoints: a whole-query label match dominates (×10 the exact tier), then per term
  exact label ≫ prefix ≫ substring ≫ source-file / rationale / attribute hits, each
  weighted by ``log(1 + N / (1 + df))``; exact and prefix tiers are scaled by the squared
  share of terms the label matches. :func:`pick_seeds` cuts at a 20 % score gap (max 3)
  and then guarantees one seed per matched term.

Matching works on a one-shot scan: every node's searchable text is joined into one string
per field family and needles are located with ``str.find``; only nodes that can match are
looked at in Python.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path

from kgservice.graphify.loader import Graph
from kgservice.graphify.terms import fold, search_tokens, strip_diacritics

EXACT_BONUS = 1000.0
PREFIX_BONUS = 100.0
SUBSTRING_BONUS = 1.0
SOURCE_BONUS = 0.5
RATIONALE_BONUS = 0.75
ATTRIBUTE_BONUS = 0.75

SEED_MAX = 3
SEED_GAP = 0.2

# Verbs that name the relation a question asks about, not a symbol: they never get a
# guaranteed seed slot unless the question is made of nothing else.
RELATIONAL_INTENT_TERMS = frozenset(
    """call calls called caller callers invoke invokes invoked use uses used using import imports
    imported export exports exported extend extends extended implement implements implemented
    depend depends reference references referenced""".split()
)

AMBIGUOUS_PREFIX = "Ambiguous: "
_SEP = "\x01"


# --- per-node text ----------------------------------------------------------------------


@dataclass(slots=True)
class NodeText:
    norm_label: str  # graphify's scoring form: stored norm_label, else folded label
    bare: str
    label_tokens: str
    source: str
    source_tokens: str
    nid_lower: str
    nid_norm: str
    rationale: str
    attr_norm: str
    attr_tokens: str


def _flatten(val: object, parts: list[str]) -> None:
    if isinstance(val, dict):
        for k, v in val.items():
            parts.append(str(k))
            _flatten(v, parts)
    elif isinstance(val, (list, tuple)):
        for item in val:
            _flatten(item, parts)
    elif val is not None:
        parts.append(str(val))


def _rationale(data: dict) -> str:
    raw = data.get("rationale")
    if not raw:
        return ""
    if isinstance(raw, (list, tuple)):
        raw = " ".join(str(p) for p in raw if p)
    return fold(str(raw))


def _attributes(data: dict) -> tuple[str, str]:
    attrs = data.get("attributes")
    if not isinstance(attrs, dict) or not attrs:
        return "", ""
    parts: list[str] = []
    _flatten(attrs, parts)
    if not parts:
        return "", ""
    norm = fold(" ".join(parts))
    return norm, " ".join(search_tokens(norm))


def _label_str(data: dict) -> str:
    lab = data.get("label")
    return str(lab) if lab else ""


def node_text(g: Graph, nid: str) -> NodeText:
    cache = g.cache.setdefault("node_text", {})
    nt = cache.get(nid)
    if nt is not None:
        return nt
    d = g.attrs[nid]
    label = _label_str(d)
    norm_label = d.get("norm_label") or fold(label)
    norm_label = str(norm_label)
    nid_lower = nid.lower()
    attr_norm, attr_tokens = _attributes(d)
    sf = d.get("source_file") or ""
    nt = NodeText(
        norm_label=norm_label,
        bare=norm_label.rstrip("()"),
        label_tokens=" ".join(search_tokens(label)),
        source=str(sf).lower(),
        source_tokens=" ".join(search_tokens(sf)),
        nid_lower=nid_lower,
        nid_norm=nid_lower if nid.isascii() else fold(nid),
        rationale=_rationale(d),
        attr_norm=attr_norm,
        attr_tokens=attr_tokens,
    )
    cache[nid] = nt
    return nt


def _offsets(texts: list[str]) -> list[int]:
    """Start offset of each text in ``_SEP.join(texts)``."""
    from itertools import accumulate

    return list(accumulate((len(t) + 1 for t in texts), initial=0))[:-1] if texts else []


class _Haystack:
    """All nodes' text of one kind joined into one string, for fast substring lookup."""

    def __init__(self, texts: list[str]):
        self.text = _SEP.join(texts)
        self.starts = _offsets(texts)

    def hits(self, needle: str) -> list[int]:
        """Indices of texts containing ``needle`` (each once, ascending)."""
        out: list[int] = []
        if not needle or _SEP in needle:
            return out
        text, starts = self.text, self.starts
        find = text.find
        pos = find(needle)
        n = len(starts)
        while pos != -1:
            idx = bisect_right(starts, pos) - 1
            out.append(idx)
            nxt = idx + 1
            if nxt >= n:
                break
            pos = find(needle, starts[nxt])
        return out

    def count(self, needle: str) -> int:
        return len(self.hits(needle))


def _hay_text(nid: str, d: dict) -> str:
    label = d.get("label")
    label = str(label) if label else ""
    sf = d.get("source_file")
    parts = [str(d.get("norm_label") or ""), label.lower() if label.isascii() else fold(label),
             nid.lower() if nid.isascii() else nid.lower() + "\x00" + fold(nid)]
    if sf:
        sf = str(sf)
        parts.append(sf.lower() if sf.isascii() else sf.lower() + "\x00" + fold(sf))
    if "rationale" in d and d["rationale"]:
        parts.append(_rationale(d))
    if "attributes" in d and d["attributes"]:
        parts.append(_attributes(d)[0])
    return "\x00".join(parts)


def _search_hay(g: Graph) -> _Haystack:
    """Every field a term can match in, per node (a superset filter, never a verdict)."""
    hay = g.cache.get("search_hay")
    if hay is None:
        attrs = g.attrs
        hay = _Haystack([_hay_text(nid, attrs[nid]) for nid in g.order])
        g.cache["search_hay"] = hay
    return hay


def _idf_text(d: dict) -> str:
    nl = d.get("norm_label")
    if not nl:
        lab = d.get("label")
        nl = strip_diacritics(str(lab)) if lab else ""
    return str(nl).lower()


def _idf_hay(g: Graph) -> _Haystack:
    hay = g.cache.get("idf_hay")
    if hay is None:
        attrs = g.attrs
        hay = _Haystack([_idf_text(attrs[nid]) for nid in g.order])
        g.cache["idf_hay"] = hay
    return hay


def candidates(g: Graph, needles: list[str]) -> list[str]:
    """Nodes whose text contains any needle, in graph order."""
    hay = _search_hay(g)
    idx: set[int] = set()
    for s in needles:
        if s:
            idx.update(hay.hits(s))
    return [g.order[i] for i in sorted(idx)]


def compute_idf(g: Graph, terms: list[str]) -> dict[str, float]:
    n = len(g.order) or 1
    hay = _idf_hay(g)
    out: dict[str, float] = {}
    for t in terms:
        if t not in out:
            out[t] = math.log(1 + n / (1 + hay.count(t)))
    return out


# --- query scoring ----------------------------------------------------------------------


@dataclass
class QueryScores:
    ranked: list[tuple[float, str]]
    best_seed_by_term: dict[str, str]
    term_order: tuple[str, ...]


def score_query(g: Graph, terms: list[str], *, per_term: bool, degree=None) -> QueryScores:
    """Rank nodes for ``terms``; with ``per_term`` also the best node per term.

    ``degree(nid)`` breaks per-term ties (higher first); it defaults to the degree of the
    undirected graph graphify's query loads.
    """
    norm_terms = list(dict.fromkeys(tok for t in terms for tok in search_tokens(t)))
    n_terms = len(norm_terms)
    idf = compute_idf(g, norm_terms)
    joined = " ".join(norm_terms)
    joined_w = max((idf.get(t, 1.0) for t in norm_terms), default=1.0)
    if degree is None:
        def degree(nid: str) -> int:
            return g.degree(nid, directed=g.directed, multigraph=g.multigraph)
    scored: list[tuple[float, str]] = []
    best: dict[str, list] = {}  # term -> [best single score, nodes reaching it]
    for nid in candidates(g, norm_terms + ([joined] if joined else [])):
        nt = node_text(g, nid)
        nl, bare, lt = nt.norm_label, nt.bare, nt.label_tokens
        score = 0.0
        if joined:
            if joined in (nl, bare, lt, nt.nid_lower):
                score += EXACT_BONUS * 10 * joined_w
            elif nl.startswith(joined) or bare.startswith(joined) or lt.startswith(joined):
                score += PREFIX_BONUS * 10 * joined_w
        matched = 0
        tiered = 0.0
        for t in norm_terms:
            w = idf.get(t, 1.0)
            tier = substr = src = rat = att = 0.0
            if t == nl or t == bare:
                tier = EXACT_BONUS * w
                matched += 1
            elif nl.startswith(t) or bare.startswith(t):
                tier = PREFIX_BONUS * w
                matched += 1
            elif t in nl:
                substr = SUBSTRING_BONUS * w
                score += substr
                matched += 1
            if t in nt.source:
                src = SOURCE_BONUS * w
                score += src
            if nt.rationale and t in nt.rationale:
                rat = RATIONALE_BONUS * w
                score += rat
            if nt.attr_norm and (t in nt.attr_norm or t in nt.attr_tokens):
                att = ATTRIBUTE_BONUS * w
                score += att
            tiered += tier
            if per_term:
                if t in (nl, bare, lt, nt.nid_lower):
                    single = EXACT_BONUS * 10 * w
                elif nl.startswith(t) or bare.startswith(t) or lt.startswith(t):
                    single = PREFIX_BONUS * 10 * w
                else:
                    single = 0.0
                single += tier + substr + src + rat + att
                if single > 0:
                    cur = best.get(t)
                    if cur is None or single > cur[0]:
                        best[t] = [single, [nid]]
                    elif single == cur[0]:
                        cur[1].append(nid)
        if tiered:
            score += tiered * (matched / n_terms) ** 2
        if score > 0:
            scored.append((score, nid))
    scored.sort(key=lambda s: (-s[0], len(g.label_or_id(s[1])), s[1]))
    # ties on the score go to the higher degree, then the shorter label, then the id
    keyed = {t: min((-single, -degree(n), len(g.label_or_id(n)), n) for n in nodes)
             for t, (single, nodes) in best.items()}
    by_term = {t: key[3] for t, key in keyed.items()}
    order = tuple(t for t, _ in sorted(keyed.items(), key=lambda kv: (kv[1], kv[0])))
    return QueryScores(scored, by_term, order)


def score_nodes(g: Graph, terms: list[str]) -> list[tuple[float, str]]:
    return score_query(g, terms, per_term=False).ranked


def seed_label_key(g: Graph, nid: str) -> str:
    d = g.attrs[nid]
    return (d.get("norm_label") or fold(_label_str(d))) or nid


def pick_seeds(
    g: Graph,
    ranked: list[tuple[float, str]],
    best_seed_by_term: dict[str, str] | None = None,
    term_order: tuple[str, ...] = (),
    max_k: int = SEED_MAX,
    gap_ratio: float = SEED_GAP,
) -> list[str]:
    """Top scorers within ``gap_ratio`` of the best (at most ``max_k``, one per label),
    then one seed per matched term, strongest term first."""
    if not ranked:
        return []
    top = ranked[0][0]
    seeds: list[str] = []
    seen: set[str] = set()
    for score, nid in ranked:
        if len(seeds) >= max_k:
            break
        if seeds and score < top * gap_ratio:
            break
        key = seed_label_key(g, nid)
        if key in seen:
            continue
        seen.add(key)
        seeds.append(nid)
    if best_seed_by_term:
        ordered = [t for t in term_order if t in best_seed_by_term]
        listed = set(ordered)
        ordered += sorted(t for t in best_seed_by_term if t not in listed)
        for t in ordered:
            nid = best_seed_by_term[t]
            key = seed_label_key(g, nid)
            if nid not in seeds and key not in seen:
                seen.add(key)
                seeds.append(nid)
    return seeds


def query_seeds(g: Graph, terms: list[str]) -> list[str]:
    """graphify's keyword seeding for already-split ``terms``."""
    qs = score_query(g, terms, per_term=True)
    by_term = qs.best_seed_by_term
    intent = {t for t in by_term if t in RELATIONAL_INTENT_TERMS}
    if intent and any(t not in RELATIONAL_INTENT_TERMS for t in terms):
        by_term = {t: nid for t, nid in by_term.items() if t not in intent}
    return pick_seeds(g, qs.ranked, by_term, qs.term_order)


# --- tiered name matching ---------------------------------------------------------------

_PY_QUALIFIED_RE = re.compile(r"^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)[.:]([A-Za-z_]\w*)(?:\(\))?$")


def _tier_candidates(g: Graph, term: str, norm_query: str) -> list[str]:
    first = term.split(" ", 1)[0] if term else ""
    return candidates(g, [first, norm_query.replace(_SEP, "")])


def _literal_exact(g: Graph, term: str, norm_query: str) -> bool:
    for nid in _tier_candidates(g, term, norm_query):
        nt = node_text(g, nid)
        if (term in (nt.norm_label, nt.bare, nt.label_tokens, nt.nid_lower)
                or norm_query in (nt.norm_label, nt.bare, nt.nid_norm)):
            return True
    return False


def _path_scoped(g: Graph, path_part: str, symbol_part: str) -> list[str]:
    path_tokens = " ".join(search_tokens(path_part))
    norm_path = fold(path_part).strip()
    symbol_term = " ".join(search_tokens(symbol_part))
    norm_symbol = fold(symbol_part).strip()
    if not (path_tokens or norm_path) or not (symbol_term or norm_symbol):
        return []
    out: list[str] = []
    for nid in _tier_candidates(g, symbol_term, norm_symbol):
        d = g.attrs[nid]
        sf = str(d.get("source_file") or "")
        s_tokens = " ".join(search_tokens(sf))
        s_norm = fold(sf).strip()
        if not (
            s_tokens == path_tokens
            or s_norm == norm_path
            or (norm_path and s_norm.endswith("/" + norm_path))
            or (path_tokens and s_tokens.endswith(" " + path_tokens))
        ):
            continue
        nt = node_text(g, nid)
        if (symbol_term in (nt.norm_label, nt.bare, nt.label_tokens, nt.nid_lower)
                or norm_symbol in (nt.norm_label, nt.bare)):
            out.append(nid)
    return out


def _python_qualified(g: Graph, label: str) -> list[str]:
    m = _PY_QUALIFIED_RE.match(label.strip())
    if not m:
        return []
    module = m.group(1).replace(".", "/")
    for path_part in (f"{module}.py", f"{module}/__init__.py"):
        hit = _path_scoped(g, path_part, m.group(2))
        if hit:
            return hit
    return []


def find_node_tiers(g: Graph, label: str) -> tuple[list[str], list[str], list[str], list[str]]:
    """(source_exact, exact, prefix, substring) matches of ``label``, graph order."""
    cache = g.cache.setdefault("tiers", {})
    hit = cache.get(label)
    if hit is None:
        hit = cache[label] = _find_node_tiers(g, label)
    return tuple(list(t) for t in hit)  # type: ignore[return-value]


def _find_node_tiers(g: Graph, label: str) -> tuple[list[str], list[str], list[str], list[str]]:
    term = " ".join(search_tokens(label))
    norm_query = fold(str(label)).strip()
    if "::" in label and not _literal_exact(g, term, norm_query):
        path_part, _, symbol_part = label.partition("::")
        path_part, symbol_part = path_part.strip(), symbol_part.strip()
        if path_part and symbol_part:
            scoped = _path_scoped(g, path_part, symbol_part)
            if scoped:
                return scoped, [], [], []
    if _PY_QUALIFIED_RE.match(label.strip()) and not _literal_exact(g, term, norm_query):
        scoped = _python_qualified(g, label)
        if scoped:
            return scoped, [], [], []
    if not term:
        return [], [], [], []
    source_exact: list[str] = []
    exact: list[str] = []
    prefix: list[str] = []
    substring: list[str] = []
    for nid in _tier_candidates(g, term, norm_query):
        nt = node_text(g, nid)
        nl, bare, lt = nt.norm_label, nt.bare, nt.label_tokens
        if term == nt.source_tokens:
            source_exact.append(nid)
        elif (term in (nl, bare, lt, nt.nid_lower)
              or norm_query in (nl, bare, nt.nid_norm)):
            exact.append(nid)
        elif (nl.startswith(term) or bare.startswith(term) or lt.startswith(term)
              or nt.nid_lower.startswith(term) or nl.startswith(norm_query) or bare.startswith(norm_query)):
            prefix.append(nid)
        elif term in nl or term in lt or norm_query in nl:
            substring.append(nid)
    if source_exact:
        base = fold(Path(label).name).lower()
        preferred = []
        for nid in source_exact:
            d = g.attrs[nid]
            if str(d.get("source_location", "")) != "L1":
                continue
            lbl = fold(str(d.get("label") or ""))
            if lbl == base or lbl.endswith("/" + base):
                preferred.append(nid)
        if len(preferred) == 1:
            source_exact = preferred + [n for n in source_exact if n != preferred[0]]
    return source_exact, exact, prefix, substring


def rivals_across_files(g: Graph, tier: list[str]) -> list[str]:
    """One node per distinct (repo, source_file) in ``tier``, or [] when only one file."""
    by_file: dict[tuple[str, str], str] = {}
    for nid in tier:
        d = g.attrs[nid]
        by_file.setdefault((str(d.get("repo") or ""), str(d.get("source_file") or "")), nid)
    return list(by_file.values()) if len(by_file) > 1 else []


def is_ambiguity(message: str | None) -> bool:
    return message is not None and message.startswith(AMBIGUOUS_PREFIX)


def ambiguity_message(g: Graph, label: str, rivals: list[str]) -> str:
    repos = {str(g.attrs[r].get("repo") or "") for r in rivals}

    def where(r: str) -> str:
        d = g.attrs[r]
        src = str(d.get("source_file") or "")
        repo = d.get("repo")
        return f"{repo}/{src}" if len(repos) > 1 and repo and src else src

    listing = "\n".join(f"  {where(r) or r}\n    id: {r}" for r in rivals)
    symbol = g.attrs[rivals[0]].get("label") or label
    sources = [str(g.attrs[r].get("source_file") or "") for r in rivals]
    if any(sources.count(s) > 1 for s in sources if s):
        retry = ("Retry with the full node id: the same path exists in more than one repo, "
                 "so a path cannot tell them apart.")
    else:
        retry = (f"Retry with path::symbol using one of the paths above (e.g. "
                 f"<path>::{symbol}) or the full node id.")
    return f"{AMBIGUOUS_PREFIX}'{label}' matches {len(rivals)} nodes in different files.\n{listing}\n{retry}"


def same_file_message(g: Graph, label: str, hits: list[str]) -> str:
    src = g.attrs[hits[0]].get("source_file")
    where = f"in {src}" if src else "with no source file"
    listing = "\n".join(
        f"  {g.attrs[h].get('source_location') or g.label(h)}\n    id: {h}" for h in hits
    )
    return f"{AMBIGUOUS_PREFIX}'{label}' matches {len(hits)} nodes {where}.\n{listing}\nRetry with the full node id."


def near_miss_message(g: Graph, label: str, hits: list[str], limit: int = 5) -> str:
    lines = []
    for nid in hits[:limit]:
        d = g.attrs[nid]
        name = sanitize(g.label_or_id(nid))
        where = " ".join(p for p in (str(d.get("source_file") or "").strip(),
                                     str(d.get("source_location") or "").strip()) if p)
        lines.append(f"  {name}" + (f"  {sanitize(where)}" if where else ""))
    if len(hits) > limit:
        lines.append(f"  ... and {len(hits) - limit} more")
    example = sanitize(g.label_or_id(hits[0]))
    src = str(g.attrs[hits[0]].get("source_file") or "").strip()
    form = f"{sanitize(src)}::{example}" if src else example
    return (f"No exact match for '{sanitize(label)}'. These names contain it, but none is called that:\n"
            + "\n".join(lines)
            + f"\nRetry with the exact label, a path::symbol form (e.g. {form}), or the full node id.")


def no_scoped_match_message(g: Graph, path_part: str, symbol_part: str) -> str:
    symbol_term = " ".join(search_tokens(symbol_part))
    norm_symbol = fold(symbol_part).strip()
    others: set[str] = set()
    for nid in _tier_candidates(g, symbol_term, norm_symbol):
        nt = node_text(g, nid)
        if (symbol_term in (nt.norm_label, nt.bare, nt.label_tokens)
                or norm_symbol in (nt.norm_label, nt.bare)):
            sf = g.attrs[nid].get("source_file") or ""
            if sf:
                others.add(str(sf))
    msg = f"No node matching '{path_part}::{symbol_part}' found; {path_part} defines no '{symbol_part}'."
    if others:
        msg += "\n" + "\n".join(f"  defined in {s}" for s in sorted(others))
    return msg


def tier_refusal(g: Graph, label: str, tier: list[str], *, file_query: bool) -> str | None:
    rivals = rivals_across_files(g, tier)
    if rivals:
        return ambiguity_message(g, label, rivals)
    if file_query and len(tier) > 1 and tier == _python_qualified(g, label):
        file_query = False
    if len(tier) > 1 and not file_query:
        return same_file_message(g, label, tier)
    return None


def resolve_single_node(g: Graph, label: str) -> tuple[str | None, str | None]:
    """``explain``'s resolution: a source/exact/prefix winner, else a refusal message."""
    source_exact, exact, prefix, substring = find_node_tiers(g, label)
    if not (source_exact or exact or prefix):
        if not substring:
            return None, f"No node matching '{label}' found."
        return None, near_miss_message(g, label, substring)
    tier = source_exact or exact or prefix
    refusal = tier_refusal(g, label, tier, file_query=bool(source_exact) and "::" not in label)
    if refusal:
        return None, refusal
    return tier[0], None


def query_name_refusal(g: Graph, label: str) -> str | None:
    """Refuse a query that is itself the exact name of several nodes; None otherwise."""
    source_exact, exact, _p, _s = find_node_tiers(g, label)
    tier = source_exact or exact
    if not tier:
        return None
    refusal = tier_refusal(g, label, tier, file_query=bool(source_exact) and "::" not in label)
    return refusal if is_ambiguity(refusal) else None


def pick_scored_endpoint(g: Graph, scored: list[tuple[float, str]], query: str) -> str:
    """The first scored node whose label holds every query token, else the top scorer."""
    qtokens = set(search_tokens(query))
    if not qtokens:
        return scored[0][1]
    for _s, nid in scored:
        if qtokens <= set(search_tokens(g.label_or_id(nid))):
            return nid
    return scored[0][1]


def resolve_path_endpoint(g: Graph, query: str) -> tuple[str | None, list[tuple[float, str]], str | None]:
    """(node, scores, None) | (None, [], refusal) | (None, [], None) for no match."""
    source_exact, exact, _p, _s = find_node_tiers(g, query)
    hits = source_exact or exact
    if hits:
        refusal = tier_refusal(g, query, hits, file_query=bool(source_exact) and "::" not in query)
        if refusal:
            return None, [], refusal
        return hits[0], [], None
    path_part, sep, symbol_part = query.partition("::")
    if sep and path_part.strip() and symbol_part.strip():
        return None, [], no_scoped_match_message(g, path_part.strip(), symbol_part.strip())
    scored = score_nodes(g, [t.lower() for t in query.split()])
    if not scored:
        return None, [], None
    return pick_scored_endpoint(g, scored, query), scored, None


_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
MAX_LABEL_LEN = 256


def sanitize(text: object) -> str:
    """Drop control characters and cap length (labels come from documents)."""
    if text is None:
        return ""
    s = _CONTROL_RE.sub("", str(text))
    return s[:MAX_LABEL_LEN]
