"""The front-end libraries (Chart.js for the dashboard, Swagger UI for /docs) ship inside the package:
pinned, checksummed, with their licences."""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources

from testkit import ROOT

VENDOR = resources.files("app.web") / "static" / "vendor"


def test_the_libraries_are_in_the_package_with_their_checksums_and_licences() -> None:
    sums = dict(line.split()[::-1] for line in (VENDOR / "SHA256SUMS").read_text().splitlines())
    shipped = {path.name for path in VENDOR.iterdir() if path.name != "SHA256SUMS"}
    assert set(sums) == shipped, "every vendored file has its sum (scripts/vendor-frontend)"
    for name, digest in sums.items():
        assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() == digest, f"{name} differs from SHA256SUMS"
    assert "MIT License" in (VENDOR / "chart.js.LICENSE.md").read_text()
    assert "Apache License" in (VENDOR / "swagger-ui.LICENSE").read_text()


def test_the_shipped_chart_js_is_the_version_the_lock_file_pins() -> None:
    lock = json.loads((ROOT / "app" / "web" / "package-lock.json").read_text())
    pinned = lock["packages"]["node_modules/chart.js"]["version"]
    header = (VENDOR / "chart.umd.min.js").read_text()[:200]
    shipped = re.search(r"Chart\.js v(\d+\.\d+\.\d+)", header)
    assert shipped is not None and shipped.group(1) == pinned


def test_the_shipped_swagger_ui_is_the_version_the_lock_file_pins() -> None:
    lock = json.loads((ROOT / "app" / "web" / "package-lock.json").read_text())
    pinned = lock["packages"]["node_modules/swagger-ui-dist"]["version"]
    bundle = (VENDOR / "swagger-ui-bundle.js").read_text()
    assert f'"{pinned}"' in bundle, f"swagger-ui-bundle.js is not Swagger UI {pinned}"
