#!/bin/sh
# Container entrypoint for an agent: enrol once with HWADVISOR_ENROLLMENT_TOKEN, then run.
set -eu
config="${HWADVISOR_AGENT_CONFIG:-/var/lib/hwadvisor/agent.json}"
if [ ! -f "$config" ]; then
  if [ -z "${HWADVISOR_ENROLLMENT_TOKEN:-}" ]; then
    echo "set HWADVISOR_ENROLLMENT_TOKEN (hwadvisor token create enrollment, on the server)" >&2
    exit 2
  fi
  hwadvisor agent enroll --server "${HWADVISOR_SERVER:?set HWADVISOR_SERVER}" \
    --token "$HWADVISOR_ENROLLMENT_TOKEN" --config "$config"
fi
exec hwadvisor agent run --config "$config"
