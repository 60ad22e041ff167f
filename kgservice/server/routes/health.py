"""/livez (static), /readyz (backends answer), /metrics (Prometheus; a reader key unless metrics_public)."""

from __future__ import annotations

from pathlib import Path

import anyio.to_thread
from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response

from kgservice.server.deps import PUBLIC
from kgservice.server.metrics import CONTENT_TYPE_LATEST
from kgservice.server.routes import ctx_of

router = APIRouter(tags=["health"])


@router.get("/livez", dependencies=[Depends(PUBLIC)])
def livez() -> JSONResponse:
    return JSONResponse({"status": "ok"})


def _checks(request: Request) -> dict[str, str]:
    sc = ctx_of(request)
    out: dict[str, str] = {}
    try:
        sc.kb.store.get_nodes(["__readyz__"])  # one round trip through the pooled driver
        interrupted = sc.kb.store.interrupted_restore()
        out["graph"] = "ok" if interrupted is None else (
            f"a restore --replace of {Path(str(interrupted['path'])).name} did not finish: the graph is partial; "
            "`kg doctor --repair` resumes it")
    except Exception as exc:
        out["graph"] = f"{type(exc).__name__}: {exc}"[:300]
    try:
        sc.keys().list()  # a real read: the keys live in the store (Neo4j or keys.sqlite3)
        out["keys"] = "ok"
    except Exception as exc:
        out["keys"] = f"{type(exc).__name__}: {exc}"[:300]
    try:
        from kgservice.admin.service_files import damaged_files

        bad = damaged_files(sc.settings)
        out["files"] = "ok" if not bad else "; ".join(f.line() for f in bad) + " (`kg doctor --repair` rebuilds it)"
    except Exception as exc:
        out["files"] = f"{type(exc).__name__}: {exc}"[:300]
    try:  # a `kg migrate` that this release cannot work beside makes this server unready
        from kgservice.stores.schema import readiness

        out["schema"] = readiness(sc.kb.store.schema_record())
    except Exception as exc:
        out["schema"] = f"{type(exc).__name__}"
    if sc.settings.qdrant_url:
        try:
            import httpx

            r = httpx.get(sc.settings.qdrant_url.rstrip("/") + "/readyz", timeout=1.0)
            out["vectors"] = "ok" if r.status_code == 200 else f"HTTP {r.status_code}"
        except Exception as exc:
            out["vectors"] = f"{type(exc).__name__}"
    return out


@router.get("/readyz", dependencies=[Depends(PUBLIC)])
async def readyz(request: Request) -> JSONResponse:
    from kgservice.deployment import vector_placement

    sc = ctx_of(request)
    checks = await anyio.to_thread.run_sync(_checks, request)
    ready = all(v == "ok" for v in checks.values())
    jobs = ("in-process: this server runs queued jobs itself" if sc.runs_jobs
            else "kg worker: queued jobs wait for a worker process")
    model = sc.kb.model_health.status().to_dict()  # reported; reads need no model
    from kgservice.server.disclosure import redact_all

    # public: the checks and where vectors live, with no absolute server path (disclosure)
    return JSONResponse({"status": "ready" if ready else "not ready", "checks": redact_all(checks, sc.settings),
                         "vectors": redact_all(vector_placement(sc.settings).to_dict(), sc.settings), "jobs": jobs,
                         "model": model},
                        status_code=200 if ready else 503)


def metrics(request: Request) -> Response:
    """Prometheus text format (added by create_app: public only with metrics_public)."""
    return Response(ctx_of(request).metrics.expose(), media_type=CONTENT_TYPE_LATEST)
