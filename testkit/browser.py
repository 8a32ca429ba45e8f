"""The Chromium the dashboard is driven in: Debian's package (a test tool's own browser download
fails on the lab's machines), launched the same way by the dashboard tests and the scale benchmark."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Playwright

CHROMIUM = os.environ.get("HWADVISOR_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def chromium_installed() -> bool:
    return Path(CHROMIUM).exists()


def launch(playwright: Playwright) -> Browser:
    """Headless Chromium from CHROMIUM (HWADVISOR_CHROMIUM) with the flags every caller uses."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
