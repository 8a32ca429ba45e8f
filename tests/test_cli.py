"""The `hwadvisor` command line as a user runs it: a real process, its exit status and its words."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from app.bench.suites import load_suite
from app.cli.bench import ONLY_EXAMPLES
from tests.factories import Api, result, run_report
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


def scratch_env(database_url: str, tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "HWADVISOR_DATABASE_URL": database_url, "HWADVISOR_DATA_DIR": str(tmp_path)}


def test_import_of_a_csv_that_is_not_utf8_says_so_in_one_line(tmp_path: Path) -> None:
    latin1 = tmp_path / "vendor.csv"
    latin1.write_bytes("source,workload\npublic:vendor-x,résnet50/infer\n".encode("latin-1"))
    done = hwadvisor("import", str(latin1), env=scratch_env(f"sqlite:///{tmp_path / 'db.sqlite'}", tmp_path))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "is not UTF-8" in done.stderr and "0xe9" in done.stderr


def test_import_reads_a_csv_saved_by_excel_with_a_byte_order_mark(tmp_path: Path) -> None:
    csv = (
        "source,hardware_id,hardware_name,workload,runtime,precision,batch_size,throughput_samples_per_s\n"
        "public:vendor-x,h100-sxm5-80gb,H100 SXM5,resnet50/infer,tensorrt,fp16,64,31000\n"
    )
    excel = tmp_path / "excel.csv"
    excel.write_bytes(b"\xef\xbb\xbf" + csv.encode())
    done = hwadvisor("import", str(excel), env=scratch_env(f"sqlite:///{tmp_path / 'db.sqlite'}", tmp_path))
    assert done.returncode == 0, done.stderr
    assert "imported 1 results" in done.stdout


def test_bench_only_an_unknown_workload_names_the_ones_that_exist_and_measures_nothing() -> None:
    done = hwadvisor("bench", "--only", "nosuch")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "unknown workload 'nosuch'; these exist: " in done.stderr
    named = done.stderr.split("these exist: ", 1)[1]
    assert "resnet50" in named and "gemm_1024" in named and "[1/" not in done.stderr


def test_bench_only_a_workload_its_suite_does_not_run_says_what_the_suite_runs() -> None:
    done = hwadvisor("bench", "--only", "gemm_2048")  # a real primitive, but the quick suite has none of it
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "suite quick runs no gemm_2048 config on this machine" in done.stderr and "resnet50" in done.stderr


def test_the_examples_in_bench_help_are_in_the_default_suite() -> None:
    quick = {workload for row in load_suite("quick").grid for workload in row.workloads}
    assert ONLY_EXAMPLES and set(ONLY_EXAMPLES) <= quick
    assert ", ".join(ONLY_EXAMPLES) in hwadvisor("bench", "--help", env={**os.environ, "COLUMNS": "300"}).stdout


def test_recommend_an_unknown_workload_names_the_ones_that_exist(api: Api, database_url: str, tmp_path: Path) -> None:
    _machine_id, token = api.enroll()
    assert api.post_run(token, run_report(results=[result(workload="mymodel/infer")])).status_code == 201
    env = scratch_env(database_url, tmp_path)

    unknown = hwadvisor("recommend", "nosuchmodel", env=env)
    assert unknown.returncode == 1 and "Traceback" not in unknown.stderr
    assert "unknown workload 'nosuchmodel'; these exist: " in unknown.stderr
    named = unknown.stderr.split("these exist: ", 1)[1]
    assert "resnet50" in named and "bert_base_squad" in named  # the zoo's and the published ones

    lab_own = hwadvisor("recommend", "mymodel", env=env)  # not in the zoo, but measured here
    assert lab_own.returncode == 0, lab_own.stderr
    assert "nothing has measured" not in lab_own.stdout and "torch-eager" in lab_own.stdout
