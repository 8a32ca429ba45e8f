"""The dashboard's one library ships inside the package: pinned, checksummed, with its licence."""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources

from testkit import ROOT

VENDOR = resources.files("app.web") / "static" / "vendor"


def test_chart_js_is_in_the_package_with_its_checksum_and_licence() -> None:
    sums = dict(line.split()[::-1] for line in (VENDOR / "SHA256SUMS").read_text().splitlines())
    assert set(sums) == {"chart.umd.min.js", "chart.js.LICENSE.md"}
    for name, digest in sums.items():
        assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() == digest, f"{name} differs from SHA256SUMS"
    assert "MIT License" in (VENDOR / "chart.js.LICENSE.md").read_text()


def test_the_shipped_chart_js_is_the_version_the_lock_file_pins() -> None:
    lock = json.loads((ROOT / "app" / "web" / "package-lock.json").read_text())
    pinned = lock["packages"]["node_modules/chart.js"]["version"]
    header = (VENDOR / "chart.umd.min.js").read_text()[:200]
    shipped = re.search(r"Chart\.js v(\d+\.\d+\.\d+)", header)
    assert shipped is not None and shipped.group(1) == pinned
