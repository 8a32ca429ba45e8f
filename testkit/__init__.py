"""What the tests and the benchmarks share: test data (factories, the hand-made lab, a replayed
H100's NVML), real server and agent processes, and the Chromium the dashboard is driven in.

It lives beside tests/ rather than inside it so that benchmarks never import a test module, and it
is not part of the wheel (pyproject.toml excludes it): it runs from a checkout only, like the tests.
Pytest fixtures stay in the conftest files; they call into this package.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Captured machines for probe replays; they stay with the tests that read most of them.
MACHINES = ROOT / "tests" / "fixtures" / "machines"
