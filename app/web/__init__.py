"""The dashboard: one page and its static files, served by the API server.

The page is a small application in plain JavaScript (app/web/static/app.js) that reads and writes
through the same REST API as every other client, logged in with the admin token or a read-only key
(a session cookie). Its one third-party library, Chart.js, comes from the npm registry pinned by
web/package-lock.json; ./scripts/setup installs it and copies it to static/vendor/.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles

STATIC = Path(__file__).parent / "static"
VENDOR_CHART = STATIC / "vendor" / "chart.umd.min.js"
router = APIRouter(include_in_schema=False)

MISSING_VENDOR = """<!doctype html><meta charset="utf-8"><title>hwadvisor</title>
<p>The dashboard's chart library is not installed. Run <code>./scripts/setup</code> (it runs
<code>npm ci</code> in <code>web/</code> and copies Chart.js into <code>app/web/static/vendor/</code>).</p>"""


@router.get("/", response_model=None)
def dashboard() -> FileResponse | HTMLResponse:
    if not VENDOR_CHART.exists():
        return HTMLResponse(MISSING_VENDOR, status_code=503)
    return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


def mount(app: FastAPI) -> None:
    app.include_router(router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
