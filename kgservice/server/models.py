"""Request and reply bodies of the REST API (pydantic at the boundary; OpenAPI from these)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from kgservice.config import DEFAULT_MAX_ROUNDS
from kgservice.stores.shared import SavedResult

MAX_QUESTION = 4000
MAX_TEXT = 200_000  # characters of one text ingest (bytes are bounded by max_body before this)
MAX_FILE_B64 = 16 << 20  # base64 characters of one uploaded document (a job's payload is at most 16 MiB)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt field is a 422 naming it, not silently ignored


class AskIn(Strict):
    question: str = Field(min_length=1, max_length=MAX_QUESTION)
    max_rounds: int = Field(DEFAULT_MAX_ROUNDS, ge=1, le=6)
    max_units: int = Field(40, ge=1, le=200)
    top_k: int = Field(5, ge=1, le=50)
    threshold: float = Field(0.6, ge=0.0, le=1.0)
    trace: bool = False


class HitUnit(BaseModel):
    id: str
    unit: str


class SourceOut(BaseModel):
    """A cited unit's document: its line range and those lines (``ref``: ``doc:lines``); for a
    converted document the page (slide, sheet) and the lines within it, the heading they are
    under, and ``location`` in words ("rivers.pdf, page 2, lines 6–7")."""
    unit: str
    doc: str
    lines: tuple[int, int] | None = None
    snippet: str | None = None
    ref: str
    page: int | None = None
    page_word: str | None = None
    page_lines: tuple[int, int] | None = None
    section: str | None = None
    location: str | None = None


class AskOut(BaseModel):
    """An answer in the one shape every interface gives: the fields of the library's
    ``AskResult`` (``kg ask --json``), with the same names, so a client reads ``cited`` and
    ``llm`` whether it asked the CLI, REST, MCP (a subset) or the web page (its ``answer`` event)."""
    question: str
    answer: str
    short_answer: str = ""  # the answer in a few words, what a gold answer is compared to ("" if none)
    found: bool  # False: "not in the graph"
    cited: list[str]  # the unit ids the answer cites
    sentences: list[dict[str, Any]] = []  # {text, cites}
    hit_units: list[HitUnit]
    stop_reason: str
    rounds: list[dict[str, Any]] = []  # the drill-down rounds (with trace: each round's units' text too)
    llm: dict[str, Any]  # calls, tokens, repairs ... by purpose (this request's)
    caches: dict[str, dict[str, int]] = {}  # hits / misses per cache
    seconds: float
    sources: list[SourceOut] = []  # each cited unit's documents, lines and source lines
    notes: list[str] = []
    as_of_version: int | None = None  # the store's change-log version the answer reflects (at least)
    stale: bool = False  # an older version's cached answer, given without a bookmark during a catch-up


class SearchIn(Strict):
    query: str = Field(min_length=1, max_length=MAX_QUESTION)
    top_k: int = Field(5, ge=1, le=50)
    threshold: float = Field(0.3, ge=-1.0, le=1.0)


class SearchHit(BaseModel):
    """One entry node (kgservice.entry): ``score`` is its specificity-weighted entry weight;
    ``named`` the question span that names it, ``cosine`` its vector similarity, if any."""
    node_id: str
    label: str
    score: float
    named: str | None = None
    cosine: float | None = None
    mentions: int | None = None


class ExpandIn(Strict):
    seeds: list[str] = Field(min_length=1, max_length=20)
    mode: Literal["directed", "spread", "causal"] = "directed"
    max_hops: int | None = Field(None, ge=1, le=6)
    epsilon: float | None = Field(None, gt=0.0, lt=1.0)
    max_fanout: int | None = Field(None, ge=1)
    max_fire: int | None = Field(None, ge=1)
    limit: int = Field(20, ge=1, le=500)


class ExpandUnit(BaseModel):
    id: str
    text: str
    via: list[str]
    family: str | None = None  # the unit's predicate family (the page groups facts by it)


class Ranked(BaseModel):
    node: str
    energy: float


class CausalHopOut(BaseModel):
    src: str  # the cause (a ≡ member or replacement of the previous hop's effect)
    dst: str  # the effect
    unit: str  # the unit stating it


class CausalChainOut(BaseModel):
    seed: str
    hops: list[CausalHopOut]  # seed → … → end, one unit per hop


class ExpandOut(BaseModel):
    mode: str
    seeds: list[str]
    units: list[ExpandUnit] = []
    superseded: dict[str, list[str]] = {}
    ranked: list[Ranked] = []
    hops: int | None = None
    chains: list[CausalChainOut] = []  # causal mode: maximal chains, longest first, per seed
    cached: bool = False  # served from the in-memory expand cache (same request, same store version)


class UnitOut(BaseModel):
    unit_id: str
    notation: str
    subject: str
    predicate: str
    family: str
    kind: str
    doc: str | None
    mode: str
    ingested_at: str | None
    supersedes: list[str]
    superseded_by: list[str]
    lines: tuple[int, int] | None = None  # of the first document stating it
    snippet: str | None = None
    sources: list[dict] = []  # every document stating it: {doc, lines, snippet, page, page_lines, section, location}


class NodeOut(BaseModel):
    id: str
    label: str
    kind: str


class Neighbor(BaseModel):
    node_id: str
    label: str
    direction: Literal["out", "in"]
    predicate: str
    family: str
    kind: str
    unit_id: str


class NeighborsOut(BaseModel):
    node: NodeOut
    neighbors: list[Neighbor]
    total: int


class GraphifyQueryIn(Strict):
    question: str = Field(min_length=1, max_length=MAX_QUESTION)
    dfs: bool = False
    budget: int = Field(2000, ge=1, le=200_000)
    context: list[str] = []
    seed: list[str] = []
    no_expand: bool = False


class GraphifyPathIn(Strict):
    """``format``: "text" (the default) answers `kg path`'s text only; "json" adds the found
    path as data (``path``: nodes and hops) beside the same text, for a page to draw it."""
    source: str = Field(min_length=1)
    target: str = Field(min_length=1)
    undirected: bool = False
    format: Literal["text", "json"] = "text"
    through_values: bool = Field(True, description="false: walk no modifier link and no literal value node (such "
                                 "as 'high' or '2020') between the ends, as the web page does by default; true: "
                                 "graphify's walk, every link")


class GraphifyExplainIn(Strict):
    node: str = Field(min_length=1)
    all: bool = False


class TextOut(BaseModel):
    text: str
    exit_code: int = 0
    notes: list[str] = []


class PathHop(BaseModel):
    source: str
    target: str
    relations: list[str]
    confidences: list[str]
    forward: bool


class PathNode(BaseModel):
    id: str
    label: str


class PathData(BaseModel):
    nodes: list[PathNode]
    hops: list[PathHop]


class PathOut(TextOut):
    """`kg path`'s text; with ``format: "json"`` also ``path`` (null when no path was found)."""
    path: PathData | None = None


class IngestIn(Strict):
    """Exactly one of ``text`` (LLM extraction, ``mode``), ``units`` (unit notation) or ``file``
    (a PDF, DOCX, PPTX, HTML or XLSX file's bytes in base64, ``doc`` its file name: converted
    to text with its pages kept, then extracted; the request body is bounded by KG_MAX_BODY)."""

    text: str | None = Field(None, min_length=1, max_length=MAX_TEXT)
    units: str | None = Field(None, min_length=1, max_length=MAX_TEXT)
    file: str | None = Field(None, min_length=4, max_length=MAX_FILE_B64,
                             description="a document's bytes, base64; `doc` names the file (its suffix, its format)")
    mode: Literal["summary", "detail"] = "summary"
    doc: str = Field("api", min_length=1, max_length=200)

    @model_validator(mode="after")
    def _one_of(self) -> "IngestIn":
        if sum(x is not None for x in (self.text, self.units, self.file)) != 1:
            raise ValueError("give exactly one of 'text' (extracted by the LLM), 'units' (unit notation) or 'file' "
                             "(a document's bytes, base64, with 'doc' its file name)")
        if self.file is not None:
            from kgservice.convert import FORMATS, format_of

            if format_of(self.doc) is None:
                raise ValueError(f"'doc' names the uploaded file, ending in one of {', '.join(sorted(FORMATS))} "
                                 f"(its format); got {self.doc!r}")
        return self


class JobAccepted(BaseModel):
    job_id: str
    status: str
    status_url: str
    events_url: str
    bookmark: str | None = Field(default=None, description=(
        "the bookmark of the job's submission (also the X-KG-Bookmark header): send it back as X-KG-Bookmark "
        "and a read on any server of the deployment finds the job; None where the store needs none"))


class SaveResultIn(Strict):
    question: str = Field(min_length=1, max_length=MAX_QUESTION)
    answer: str = Field(min_length=1, max_length=MAX_TEXT)
    type: Literal["query", "path_query", "explain"] = "query"
    nodes: list[str] = []
    outcome: Literal["useful", "dead_end", "corrected"] | None = None
    correction: str | None = None


class SavedOut(BaseModel):
    saved: bool
    name: str
    contributor: str


class SavedResultsOut(BaseModel):
    results: list[SavedResult]  # as kept in the store: the fields of a graphify memory doc
    total: int = Field(description="how many results are saved (results holds at most `limit`, the newest)")


class KeyIn(Strict):
    user: str = Field(min_length=1, max_length=64)
    role: Literal["reader", "writer", "admin"] = "reader"
    workspaces: dict[str, Literal["reader", "writer", "admin"]] | None = Field(
        None, description="the workspaces the key may act in, with its role in each; each must be one where "
                          "the caller is admin, any existing one for the deployment's admin (default: the "
                          "workspace the request acts in, with `role`)")


class KeyGrantsIn(Strict):
    """``PATCH /v1/admin/keys/{key_id}``: the key's workspaces from now on, with its role in each
    (the same field as ``KeyIn.workspaces`` and ``kg keys list --json``)."""
    workspaces: dict[str, Literal["reader", "writer", "admin"]] = Field(
        min_length=1, description="every workspace the key may act in from now on, with its role in each")


class KeyCreated(BaseModel):
    key: str = Field(description="the API key; shown only in this reply, stored only as a digest")
    key_id: str
    user: str
    role: str
    created: str
    workspaces: dict[str, str] = {}


class JobsPruneIn(Strict):
    """``POST /v1/jobs/prune``: finished jobs last changed more than this many days ago go."""
    older_than_days: float = Field(ge=0, le=1e6)


class JobsPruned(BaseModel):
    pruned: int
    older_than_days: float
