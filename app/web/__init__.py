"""The dashboard: one page and its static files, served by the API server.

The page is plain JavaScript modules (app/web/static: main.js the shell, api.js, dom.js, charts.js,
one module per page in pages/) that read and write through the same REST API as every other client,
logged in with the admin token or a read-only key (a session cookie); no build step. A page is a
plug-in: one file in static/pages/, listed by ``pages()`` for ``GET /api/v1/registry``, from which the
shell learns what to import. The API docs page (/docs) is Swagger UI over /openapi.json. The two
third-party libraries, Chart.js and Swagger UI, come from the npm registry pinned by
app/web/package-lock.json and are committed in static/vendor/ (scripts/vendor-frontend refreshes them):
nothing is loaded from a CDN.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles

STATIC = Path(__file__).parent / "static"
PAGES = STATIC / "pages"
VENDOR_CHART = STATIC / "vendor" / "chart.umd.min.js"
router = APIRouter(include_in_schema=False)

MISSING_VENDOR = """<!doctype html><meta charset="utf-8"><title>hwadvisor</title>
<p>The dashboard's chart library is not installed. Run <code>./scripts/setup</code> (it runs
<code>npm ci</code> in <code>app/web/</code> and copies Chart.js into <code>app/web/static/vendor/</code>).</p>"""


def pages() -> list[dict[str, Any]]:
    """The dashboard's pages as registry rows: one per module in static/pages/, named by its file.

    The description is the module's opening ``//`` comment line; a page has no tasks, precisions or
    needs, and is always available (its title and place in the menu are the module's own metadata).
    """
    rows = []
    for path in sorted(PAGES.glob("*.js")):
        first = path.read_text(encoding="utf-8").split("\n", 1)[0]
        rows.append(
            {
                "name": path.stem,
                "description": first[2:].strip() if first.startswith("//") else "",
                "tasks": [],
                "precisions": [],
                "needs": [],
                "available": True,
                "reason": None,
                "details": {},
            }
        )
    return rows


@router.get("/", response_model=None)
def dashboard() -> FileResponse | HTMLResponse:
    if not VENDOR_CHART.exists():
        return HTMLResponse(MISSING_VENDOR, status_code=503)
    return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


@router.get("/docs")
def api_docs() -> FileResponse:
    """Swagger UI over /openapi.json, from the package's own copy (FastAPI's page loads it from a CDN)."""
    return FileResponse(STATIC / "api-docs.html", headers={"Cache-Control": "no-cache"})


def mount(app: FastAPI) -> None:
    app.include_router(router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
