"""What the REST routes and the MCP tools do, written once: they differ only in transport.

Every function takes the knowledge base (and the caller where it matters) and returns a
pydantic model or text; unknown units and nodes raise :class:`NotFound` (404 / a tool error).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgservice.server.auth import Principal
from kgservice.server.errors import Forbidden, NotFound
from kgservice.server.models import (
    AskIn,
    AskOut,
    CausalChainOut,
    CausalHopOut,
    ExpandIn,
    ExpandOut,
    ExpandUnit,
    HitUnit,
    IngestIn,
    JobAccepted,
    Neighbor,
    NeighborsOut,
    NodeOut,
    Ranked,
    SaveResultIn,
    SavedOut,
    SavedResultsOut,
    SearchHit,
    SearchIn,
    SourceOut,
    UnitOut,
)

if TYPE_CHECKING:
    from kgservice.service import KnowledgeBase


def ask(kb: KnowledgeBase, body: AskIn, on_round: Any = None, on_stream: Any = None) -> tuple[AskOut, Any]:
    """(reply, the pipeline's full result) — the caller may record metrics from the latter.

    Each request gets its own LLM client, so ``llm`` counts this request's calls only even
    when requests run concurrently; the cache hit/miss counts are deltas of the knowledge
    base's shared counters and may include a concurrent request's lookups. ``on_round`` gets
    each drill-down round's record as soon as it is done and ``on_stream`` the answer's streamed
    text, citations and check verdicts (the SSE stream forwards both)."""
    res = kb.ask(body.question, ask_params(body), trace=body.trace, llm=kb.new_llm(), on_round=on_round,
                 on_stream=on_stream)
    return ask_out(res, body), res


def ask_params(body: AskIn) -> Any:
    from kgservice.pipeline.asking import AskParams

    return AskParams(max_rounds=body.max_rounds, max_units=body.max_units, top_k=body.top_k, threshold=body.threshold)


def ask_cached(kb: KnowledgeBase, body: AskIn) -> tuple[AskOut, Any] | None:
    """The reply from the in-memory front of cached answers without waiting on anything (for
    the event loop), or None: then call :func:`ask` in a worker thread."""
    from kgservice.pipeline.asking import ask_from_front

    res = ask_from_front(kb.parts, body.question, trace=body.trace, params=ask_params(body))
    return None if res is None else (ask_out(res, body), res)


def ask_out(res: Any, body: AskIn) -> AskOut:
    """The library's result in the reply model: the same field names (AskOut's doc)."""
    return AskOut(question=res.question, answer=res.answer, short_answer=res.short_answer, found=bool(res.found), cited=list(res.cited),
                  sentences=list(res.sentences), hit_units=[HitUnit(**u) for u in res.hit_units],
                  stop_reason=res.stop_reason, rounds=list(res.rounds), llm=res.llm, caches=res.caches,
                  seconds=res.seconds, sources=[SourceOut(**s) for s in res.sources], notes=list(res.notes),
                  as_of_version=res.as_of_version, stale=res.stale)


def search(kb: KnowledgeBase, body: SearchIn) -> list[SearchHit]:
    """The entry step `kg search` runs (names in the text + nearest vectors, by specificity)."""
    found = kb.search(body.query, top_k=body.top_k, threshold=body.threshold)
    return [SearchHit(node_id=n.node, label=n.label, score=round(float(n.weight), 4), named=n.named or None,
                      cosine=None if n.cosine is None else round(float(n.cosine), 4), mentions=n.mentions)
            for n in found.nodes]


def resolve(kb: KnowledgeBase, text: str) -> str:
    """A node id from an id or a label (any case / width), else 404 naming it."""
    return resolve_all(kb, [text])[0]


def resolve_all(kb: KnowledgeBase, texts: list[str]) -> list[str]:
    """:func:`resolve` for several texts in one store read (distinct ids, in order)."""
    found = kb.resolve_nodes(texts)
    for text in texts:
        if found[text] is None:
            raise NotFound(f"no node {text!r} in the graph (ids and labels are matched after normalisation; "
                           f"POST /v1/search finds nodes by similarity)")
    return list(dict.fromkeys(found[t] for t in texts))  # type: ignore[misc]


def _expand_args(body: ExpandIn) -> dict[str, Any]:
    return {"limit": body.limit, "epsilon": body.epsilon, "max_hops": body.max_hops, "max_fanout": body.max_fanout,
            "max_fire": body.max_fire}


def expand(kb: KnowledgeBase, body: ExpandIn) -> ExpandOut:
    """:meth:`KnowledgeBase.expand` as a reply; ``cached`` says whether it came from the
    in-memory ``expand`` cache (the one the CLI uses too)."""
    from kgservice.service import NodeNotFound

    try:
        res, hit = kb.expand_cached(body.seeds, body.mode, **_expand_args(body))
    except NodeNotFound:
        resolve_all(kb, body.seeds)  # the 404 naming the unknown seed
        raise
    return expand_out(res, body.limit, hit)


def expand_cached(kb: KnowledgeBase, body: ExpandIn) -> ExpandOut | None:
    """The cached expansion without waiting on anything (for the event loop), or None: then
    call :func:`expand` in a worker thread."""
    res, hit = kb.expand_cached(body.seeds, body.mode, peek=True, **_expand_args(body))
    return expand_out(res, body.limit, True) if hit else None


def expand_out(res: Any, limit: int, cached: bool) -> ExpandOut:
    from kgservice.notation import format_unit
    from kgservice.service import CausalExpansion, SpreadExpansion

    if isinstance(res, CausalExpansion):
        chains = [CausalChainOut(seed=r.seed, hops=[CausalHopOut(src=h.src, dst=h.dst, unit=h.unit) for h in c.hops])
                  for r in res.results for c in r.chains]
        return ExpandOut(mode="causal", seeds=res.seeds, hops=res.max_hops, cached=cached, chains=chains[:limit])
    if isinstance(res, SpreadExpansion):
        return ExpandOut(mode="spread", seeds=res.seeds, hops=res.result.hops, cached=cached,
                         ranked=[Ranked(node=n, energy=round(float(e), 6)) for n, e in res.ranked()])
    return ExpandOut(mode="directed", seeds=res.seeds, cached=cached,
                     units=[ExpandUnit(id=u.id, text=format_unit(u, with_id=False), via=list(res.units[u.id]), family=u.family)
                            for u in res.live_units][:limit],
                     superseded={k: list(v) for k, v in sorted(res.superseded.items())})


def expand_text(out: ExpandOut) -> str:
    """The text form an MCP client reads (the same lines as ``kg expand``)."""
    if out.mode == "directed":
        lines = [f"directed expansion of {', '.join(out.seeds)}: {len(out.units)} units"
                 + (f", {len(out.superseded)} superseded skipped" if out.superseded else "")]
        lines += [f"  #{u.id} {u.text.splitlines()[0]}   <- {'; '.join(u.via)}" for u in out.units]
        return "\n".join(lines)
    if out.mode == "causal":
        from kgservice.expansion.causal import chain_text

        lines = [f"causal chains from {', '.join(out.seeds)} (at most {out.hops} hops): {len(out.chains)} chain(s)"]
        lines += ["  " + chain_text(c.seed, [(h.dst, h.unit) for h in c.hops]) for c in out.chains]
        return "\n".join(lines)
    lines = [f"spreading activation from {', '.join(out.seeds)} ({out.hops} hops)"]
    lines += [f"  {r.node}  {r.energy:.4f}" for r in out.ranked]
    return "\n".join(lines)


def get_unit(kb: KnowledgeBase, unit_id: str) -> UnitOut:
    from kgservice.notation import format_unit

    found = kb.unit(unit_id)
    if found is None:
        raise NotFound(f"no unit #{unit_id.lstrip('#')}")
    u = found.unit
    prov = kb.provenance(u.id)
    first = prov[0] if prov else None
    return UnitOut(unit_id=u.id, notation=format_unit(u), subject=u.subject, predicate=u.predicate, family=u.family,
                   kind=u.kind, doc=first.doc if first else u.doc, mode=u.mode, ingested_at=u.ingested_at,
                   supersedes=list(u.supersedes), superseded_by=found.superseded_by,
                   lines=first.lines if first else None, snippet=first.snippet if first else None,
                   sources=[p.model_dump() for p in prov])


def get_node(kb: KnowledgeBase, node: str) -> NodeOut:
    nid = resolve(kb, node)
    n = kb.store.get_nodes([nid])[0]
    return NodeOut(id=n.id, label=n.label, kind=getattr(n.kind, "value", str(n.kind)))


def neighbors(kb: KnowledgeBase, node: str, relation: str | None = None, limit: int = 50,
              offset: int = 0) -> NeighborsOut:
    """Nodes one unit away: the unit's arguments when the node is its subject (out), the
    unit's subject when the node is an argument or modifier value (in). ``relation``
    matches the predicate, family or kind (case-insensitive). In a fixed order (family,
    predicate, label, ids), so ``offset`` pages through all ``total`` of them."""
    me = get_node(kb, node)
    found = sorted(kb.neighbors(me.id, relation),
                   key=lambda x: (x.unit.family, x.unit.predicate, x.label, x.node, x.unit.id, x.direction))
    out = [Neighbor(node_id=x.node, label=x.label, direction=x.direction, predicate=x.unit.predicate,
                    family=x.unit.family, kind=x.unit.kind, unit_id=x.unit.id)
           for x in found[offset:offset + limit]]
    return NeighborsOut(node=me, neighbors=out, total=len(found))


def save_result(kb: KnowledgeBase, body: SaveResultIn, who: Principal) -> SavedOut:
    """graphify's ``save-result``, with the caller as contributor, kept in the store: every
    server of the knowledge base lists it (:mod:`kgservice.stores.shared`)."""
    rec = kb.save_result(body.question, body.answer, contributor=who.user, query_type=body.type, nodes=body.nodes,
                         outcome=body.outcome, correction=body.correction)
    return SavedOut(saved=True, name=rec.name, contributor=who.user)


def saved_results(kb: KnowledgeBase, limit: int = 100) -> SavedResultsOut:
    """The most recent ``limit`` saved results (oldest first) and how many there are."""
    found = kb.saved_results()
    return SavedResultsOut(results=found[-limit:] if limit else [],
                           total=len(found))


def validate_ingest(kb: KnowledgeBase, body: IngestIn, who: Principal, named: bool | None = None) -> dict[str, Any]:
    """The job payload, after checking what can be checked before queueing: unit notation is
    parsed (errors name line:column, nothing is queued).

    Attribution: the job records ``who.user``; the worker stores the units with ``doc`` =
    ``<user>/<doc>`` (:mod:`kgservice.jobs.run`). A ``doc`` the client names makes the upload
    the document ``<user>/<doc>`` (the same name again replaces its units); without one the
    units are added under the default name, as no document."""
    from kgservice.jobs.run import job_document_id

    named = "doc" in body.model_fields_set if named is None else named
    where = {"document": job_document_id(who.user, body.doc)} if named else {"doc": body.doc}
    if body.units is not None:
        from kgservice.notation import parse_units

        parse_units(body.units, kb.lexicon, source=body.doc, doc=body.doc)  # raises NotationErrors (InputError)
        return {"units": body.units, **where}
    if body.file is not None:  # an uploaded document is always the document <user>/<its file name>
        return {"file": body.file, "mode": body.mode, "document": job_document_id(who.user, body.doc)}
    return {"text": body.text, "mode": body.mode, **where}


def job_accepted(job: Any, who: Principal | None = None) -> JobAccepted:
    """The reply to a queued job. Its URLs name the workspace (``/w/<name>/v1/jobs/...``) when
    the caller's key has several, as such a key must; a one-workspace key's stay unprefixed."""
    from kgservice.stores import causal

    base = f"/w/{who.workspace}" if who is not None and who.workspace and len(who.workspaces or {}) > 1 else ""
    return JobAccepted(job_id=job.id, status=job.status, status_url=f"{base}/v1/jobs/{job.id}",
                       events_url=f"{base}/v1/jobs/{job.id}/events", bookmark=causal.written())


def submit_replace(kb: KnowledgeBase, doc_id: str, text: str, who: Principal, *, mode: str | None = None,
                   title: str | None = None, version: int | None = None,
                   idempotency_key: str | None = None) -> Any:
    """Queue a new version of a document (a ``replace`` job), checked first: the id, the mode,
    the notation or text (422); ``version``, the version the client saw, must be the current one
    (409 naming both). Without it the job is based on the version current now: of two
    replacements queued together, the one run second finds the document moved and fails as a
    conflict instead of mixing with the first."""
    from kgservice.lifecycle.ops import check_doc_id
    from kgservice.errors import IngestConflict

    doc_id = check_doc_id(doc_id)
    current = next(iter(kb.store.documents([doc_id])), None)
    now = current.version if current is not None else 0
    if version is not None and version != now:
        raise IngestConflict(f"document {doc_id!r} is at version {now}, not {version}: it changed since it was "
                               "read; read it again and resubmit")
    payload: dict[str, Any] = {"doc": doc_id, "text": text, "version": now}
    payload.update({k: v for k, v in (("mode", mode), ("title", title)) if v is not None})
    return kb.jobs.submit("replace", payload, who.user, idempotency_key)


def submit_forget(kb: KnowledgeBase, doc_id: str, who: Principal, idempotency_key: str | None = None) -> Any:
    """Queue forgetting a document (a ``forget`` job); an unknown document is a 404 naming it."""
    from kgservice.lifecycle.ops import check_doc_id

    doc_id = check_doc_id(doc_id)
    if not kb.store.documents([doc_id]):
        raise NotFound(f"no document {doc_id!r} in the knowledge base (GET /v1/documents lists them)")
    return kb.jobs.submit("forget", {"doc": doc_id}, who.user, idempotency_key)


def visible_job(kb: KnowledgeBase, job_id: str, who: Principal) -> Any:
    """A job the caller may see: their own, or any for an admin; others are 404 (not 403: ids
    of other users' jobs are not confirmed)."""
    from kgservice.server.auth import Role

    job = kb.jobs.get(job_id)
    if job is None or (job.user != who.user and not who.allows(Role.admin)):
        raise NotFound(f"no job {job_id!r}")
    return job


def list_jobs(kb: KnowledgeBase, who: Principal, status: str | None = None, limit: int = 100,
              user: str | None = None) -> list[Any]:
    """Newest first: the caller's own jobs, or for an admin everyone's (``user`` narrows it);
    a non-admin asking for another user's jobs is refused (403)."""
    from kgservice.server.auth import Role

    if not who.allows(Role.admin):
        if user not in (None, who.user):
            raise Forbidden(f"only an admin may list another user's jobs ({who.user} asked for {user!r})")
        user = who.user
    return kb.jobs.list(user=user, status=status, limit=limit)


def cancel_job(kb: KnowledgeBase, job_id: str, who: Principal) -> Any:
    """Cancel a job the caller may see (own, or any for an admin): queued -> cancelled now;
    running -> cancel requested, best effort (kgservice.jobs.queue); finished -> 409."""
    visible_job(kb, job_id, who)
    return kb.jobs.cancel(job_id, who.user)


def job_dict(job: Any, settings: Any = None) -> dict[str, Any]:
    """A job as a reply; with ``settings``, its error names no absolute server path (a failed job's
    error is the library's message, which may name a file: kgservice.server.disclosure)."""
    d = job.model_dump(mode="json") if hasattr(job, "model_dump") else dict(job)
    if settings is not None and isinstance(d.get("error"), str):
        from kgservice.server.disclosure import redact

        d["error"] = redact(d["error"], settings)
    return d


__all__ = ["Forbidden", "NotFound", "ask", "ask_cached", "cancel_job", "list_jobs", "expand", "expand_cached", "expand_out", "expand_text", "get_node", "get_unit", "job_dict",
           "neighbors", "resolve", "resolve_all", "save_result", "saved_results", "search", "submit_forget", "submit_replace", "validate_ingest", "visible_job"]
