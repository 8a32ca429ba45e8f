"""The `hwadvisor` command line as a user runs it: a real process, its exit status and its words."""

from __future__ import annotations

import subprocess
import sys

from tests.processes import ROOT


def hwadvisor(
    *args: str, env: dict[str, str] | None = None, timeout_s: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout_s
    )


def test_help_lists_every_command_group_without_importing_torch() -> None:
    script = (
        "import sys\n"
        "from app.cli import cli\n"
        "try:\n"
        "    cli(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('heavy:', sorted(m for m in ('torch', 'onnxruntime', 'uvicorn', 'fastapi') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "heavy: []" in done.stdout
    for command in ("server", "up", "probe", "bench", "recommend", "import", "db", "token", "machines", "jobs"):
        assert f" {command} " in done.stdout
    assert " agent " in done.stdout and " catalog " in done.stdout
