#!/usr/bin/env bash
# A GPU machine's whole check, in one go (issue "GPU truth"; docs/BENCHMARKS.md):
#
#   OUT=/tmp/gpu-truth [SUITE=benchmarks/gpu_truth.toml] [SKIP="capture"] benchmarks/gpu_truth.sh [SECONDS]
#
# on a machine with an NVIDIA GPU, from a checkout: capture the machine as a probe fixture, the clock
# and power over the first seconds of work (benchmarks.gpu_clocks), the ceilings and NVML's energy
# against power x time (benchmarks.gpu_ceilings), the engine against independent timing
# (benchmarks.engine_check --device cuda:0), the GPU tests (pytest -m gpu), then the agent path for
# real: a server on SQLite, the agent enrolled, a job of $SUITE claimed, measured and uploaded, the
# database exported. Each step has its own time limit, and the agent stops (SIGTERM: it finishes the
# config it is on and uploads what it has) when SECONDS (default 480) have passed since the start:
# the suite gets what the steps before it left (gpu_truth.toml takes about 10 minutes on an H200;
# SKIP="capture replay clocks ceilings engine_check gpu_tests" runs it alone). Python packages the
# machine lacks may wait as wheels in .whl/. Everything lands in $OUT: log.txt, fixture.tgz, db.jsonl.
set -u
START=$SECONDS
BUDGET=${1:-480}
SUITE=${SUITE:-benchmarks/gpu_truth.toml}
SKIP=" ${SKIP:-} "
OUT=${OUT:-/tmp/gpu-truth}
mkdir -p "$OUT"
LOG=$OUT/log.txt
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site:$PWD
fi
left() { echo $((BUDGET - (SECONDS - START))); }
step() {  # step NAME LIMIT COMMAND...: run with a time limit, output into the log (unless SKIP names it)
  local name=$1 limit=$2
  shift 2
  [[ $SKIP == *" $name "* ]] && return
  echo "=== $name (limit ${limit} s, $(left) s left of the budget)" | tee -a "$LOG"
  timeout -k 10 "$limit" "$@" >>"$LOG" 2>&1
  echo "=== $name: exit $? after $((SECONDS - START)) s" | tee -a "$LOG"
}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,memory.total --format=csv
  python3 -c "import torch, sys; print(sys.version.split()[0], torch.__version__, torch.version.cuda, torch.backends.cudnn.version())"
  lscpu | head -20
} >>"$LOG" 2>&1

FIXTURE=/tmp/fixture/${GPU_FIXTURE_NAME:-gpu}
step capture 60 python3 scripts/capture_machine.py "$FIXTURE" --what "${GPU_FIXTURE_WHAT:-a GPU machine, captured by benchmarks/gpu_truth.sh}"
step replay 30 python3 -c "
import json, sys
from app.probes import probe_machine
from app.probes.sources import FixtureSources
from testkit.nvml import ReplayNvml
root = '$FIXTURE'
live = json.load(open(root + '/spec.json'))
nvml = ReplayNvml(json.load(open(root + '/probe.json'))['env']['nvml_all'])
replayed = json.loads(probe_machine(FixtureSources(__import__('pathlib').Path(root)), nvml=nvml, cuda_sm_counts={}).model_dump_json())
for key in ('cpu', 'memory', 'software', 'power_sensors', 'hostname'):
    print(key, 'same' if live[key] == replayed[key] else f'differs: {live[key]} / {replayed[key]}')
print('devices', [(d['id'], d['name'], d.get('catalog_id')) for d in replayed['devices']])
"
[[ -d /tmp/fixture ]] && (cd /tmp/fixture && tar czf "$OUT/fixture.tgz" .)

step clocks 45 python3 -m benchmarks.gpu_clocks

step ceilings 90 python3 -m benchmarks.gpu_ceilings --seconds 1.5
step engine_check 200 python3 -m benchmarks.engine_check --device cuda:0 --rounds 2 --seconds 0.7
step gpu_tests 180 python3 -m pytest -m gpu tests/bench/test_gpu.py -q -p no:cacheprovider

export HWADVISOR_DATA_DIR=/tmp/hwadvisor-data HWADVISOR_AUTO_APPROVE_MACHINES=true
HWADVISOR_ADMIN_TOKEN=$(python3 -c "import secrets; print(secrets.token_hex(32))")
export HWADVISOR_ADMIN_TOKEN
URL=http://127.0.0.1:8321
python3 -m app server --port 8321 >>"$OUT/server.txt" 2>&1 &
SERVER=$!
for _ in $(seq 60); do python3 -c "import httpx; httpx.get('$URL/healthz').raise_for_status()" 2>/dev/null && break; sleep 1; done
ENROLMENT=$(python3 -m app token create enrollment 2>>"$LOG")
step enroll 60 python3 -m app agent enroll --server $URL --token "$ENROLMENT" --config /tmp/agent.json --no-quiet-check
MACHINE=$(python3 -m app machines list 2>>"$LOG" | awk '{print $1; exit}')
step job 30 python3 -m app jobs create --suite "$SUITE" --machine "$MACHINE"
step agent "$(($(left) > 30 ? $(left) : 30))" python3 -m app agent run --once --config /tmp/agent.json --no-quiet-check
sleep 2
step jobs 30 python3 -m app jobs list
step export 60 python3 -m app db export "$OUT/db.jsonl"
kill $SERVER
echo "=== done after $((SECONDS - START)) s" | tee -a "$LOG"
