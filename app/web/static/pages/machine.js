// One machine: its spec, charts of its results (by workload, vs batch, thread scaling, power), and
// its results table, paged and filtered on the server. Reached from the fleet, not from the menu.

import { api, query } from "../api.js";
import { chart, chartBox, COLORS, noChart } from "../charts.js";
import { ago, badge, fmt, h, options, pager, pairs, table, td, workloadOf } from "../dom.js";

export const page = { name: "machine", title: "Machine", order: null };

export async function render(main, { path, params, registry }) {
  const id = path[0];
  const machine = await api("GET", "/machines/" + id);
  const total = (await api("GET", "/results" + query({ machine_id: id, status: "ok", limit: 1 }))).total;
  const all = (await api("GET", "/results" + query({ machine_id: id, status: "ok", limit: 1000, offset: Math.max(0, total - 1000) }))).items;
  const spec = machine.spec || {};
  const gpus = (spec.devices || []).filter((d) => d.kind === "cuda");
  const info = h("dl", { class: "spec" },
    h("dt", { text: "status" }), h("dd", {}, badge(machine.status)),
    h("dt", { text: "hardware" }), h("dd", { text: machine.hardware || "–" }),
    h("dt", { text: "CPU" }), h("dd", { text: spec.cpu ? `${spec.cpu.model_name} · ${spec.cpu.physical_cores} cores · ${fmt(spec.cpu.effective_cpus)} usable` : "–" }),
    h("dt", { text: "memory" }), h("dd", { text: spec.memory ? fmt(spec.memory.total_mb / 1024) + " GiB" : "–" }),
    h("dt", { text: "GPUs" }), h("dd", { text: gpus.map((g) => `${g.id}: ${g.name}${g.catalog_id ? " (" + g.catalog_id + ")" : ""}`).join(", ") || "none" }),
    h("dt", { text: "catalog" }), h("dd", { id: "catalog-match" }, catalogLines(spec.devices || [], machine.catalog_pins || [])),
    h("dt", { text: "software" }), h("dd", { text: software(spec.software) }),
    h("dt", { text: "labels" }), h("dd", { text: pairs(machine.labels, ", ") || "–" }),
    h("dt", { text: "last seen" }), h("dd", { text: ago(machine.last_seen_at) }));

  const models = all.filter(isModel);
  const charts = h("div", { class: "grid2" });
  const heading = h("h2", { id: "results-heading" });
  main.replaceChildren(h("h1", { text: machine.hostname }), h("div", { class: "card" }, info), charts,
    heading, await resultsTable(id, params, registry, heading));
  if (!models.length) {
    charts.replaceChildren(h("p", { class: "muted", text: "No model results yet: schedule a suite on the Jobs page." }));
    return;
  }
  drawByWorkload(charts, models);
  drawVsBatch(charts, models);
  drawThreads(charts, models);
  drawPower(charts, models);
}

/** Each device's catalog entry and why: an admin's pin (who, when), the automatic match, or the reason there is none. */
function catalogLines(devices, pins) {
  return devices.map((d) => {
    const pin = pins.find((p) => p.device === d.id);
    const how = pin ? `pinned by ${pin.pinned_by}, ${pin.pinned_at.slice(0, 10)}` : d.catalog_id ? "matched" : d.catalog_note || "no match";
    return h("div", { "data-device": d.id, title: d.catalog_note || "" },
      `${d.id}: `, d.catalog_id ? h("strong", { text: d.catalog_id }) : "no catalog entry", h("span", { class: "muted small", text: ` — ${how}` }));
  });
}

/** "os … · python 3.11.9 · torch 2.13.0 · …": the stack's versions, whichever libraries it names. */
function software(stack) {
  if (!stack) return "–";
  return Object.entries(stack).filter(([, v]) => typeof v === "string").map(([k, v]) => `${k} ${v}`).join(" · ");
}

/** A model's result (it has a task), not a primitive's (a GEMM, a copy). */
const isModel = (r) => Boolean(r.task) || r.workload.includes("/");
const label = (r) => `${workloadOf(r)} ${r.runtime} ${r.precision}`;

function best(results, key) {
  const out = new Map();
  for (const r of results) {
    const k = key(r);
    if (!out.has(k) || r.throughput_samples_per_s > out.get(k).throughput_samples_per_s) out.set(k, r);
  }
  return out;
}

function drawByWorkload(where, results) {
  const { box, canvas } = chartBox("Throughput by workload and precision (best config, samples/s)");
  box.id = "chart-by-workload";
  where.append(box);
  const workloads = [...new Set(results.map(workloadOf))].sort();
  const precisions = [...new Set(results.map((r) => r.precision))].sort();
  const top = best(results, (r) => workloadOf(r) + "|" + r.precision);
  chart(canvas, {
    type: "bar",
    data: { labels: workloads, datasets: precisions.map((p, i) => ({ label: p, backgroundColor: COLORS[i % COLORS.length],
      data: workloads.map((w) => top.get(w + "|" + p)?.throughput_samples_per_s ?? null) })) },
    options: { maintainAspectRatio: false, scales: { y: { type: "logarithmic", title: { display: true, text: "samples/s" } } } },
  });
}

function lines(results, xKey, seriesKey) {
  const series = new Map();
  for (const r of results) {
    if (r[xKey] === null || r[xKey] === undefined) continue;
    const k = seriesKey(r);
    if (!series.has(k)) series.set(k, new Map());
    const points = series.get(k);
    if (!points.has(r[xKey]) || r.throughput_samples_per_s > points.get(r[xKey])) points.set(r[xKey], r.throughput_samples_per_s);
  }
  return [...series.entries()].map(([name, points], i) => ({
    label: name, borderColor: COLORS[i % COLORS.length], backgroundColor: COLORS[i % COLORS.length],
    data: [...points.entries()].sort((a, b) => a[0] - b[0]).map(([x, y]) => ({ x, y })),
  }));
}

function drawVsBatch(where, results) {
  const { box, canvas } = chartBox("Throughput vs batch size");
  box.id = "chart-vs-batch";
  where.append(box);
  chart(canvas, {
    type: "line",
    data: { datasets: lines(results, "batch_size", (r) => `${label(r)} ${r.device}`) },
    options: { maintainAspectRatio: false, scales: { x: { type: "logarithmic", title: { display: true, text: "batch size" } },
      y: { type: "logarithmic", title: { display: true, text: "samples/s" } } } },
  });
}

function drawThreads(where, results) {
  const cpu = results.filter((r) => r.device === "cpu" && r.threads);
  const { box, canvas } = chartBox("CPU thread scaling");
  box.id = "chart-threads";
  where.append(box);
  const counts = [...new Set(cpu.map((r) => r.threads))];
  if (!counts.length) {
    noChart(box, "No CPU results with thread counts.");
    return;
  }
  if (counts.length === 1) { // one point per line draws nothing worth reading
    noChart(box, `Measured at ${counts[0]} thread${counts[0] === 1 ? "" : "s"} only: scaling needs two thread counts or more (a suite with threads = [1, 2, 4, …]).`);
    return;
  }
  chart(canvas, {
    type: "line",
    data: { datasets: lines(cpu, "threads", (r) => `${label(r)} b${r.batch_size}`) },
    options: { maintainAspectRatio: false, scales: { x: { type: "linear", title: { display: true, text: "threads" } },
      y: { title: { display: true, text: "samples/s" } } } },
  });
}

function drawPower(where, results) {
  const powered = [...best(results.filter((r) => r.mean_power_w), (r) => label(r) + " b" + r.batch_size).values()].slice(0, 24);
  const { box, canvas } = chartBox("Power and throughput per watt");
  box.id = "chart-power";
  where.append(box);
  if (!powered.length) {
    noChart(box, "No result with a power reading.");
    return;
  }
  chart(canvas, {
    type: "bar",
    data: { labels: powered.map((r) => `${label(r)} b${r.batch_size}`), datasets: [
      { label: "mean power (W)", data: powered.map((r) => r.mean_power_w), backgroundColor: COLORS[1], yAxisID: "w" },
      { label: "samples/s per W", data: powered.map((r) => r.throughput_samples_per_s / r.mean_power_w), backgroundColor: COLORS[0], yAxisID: "eff" },
    ] },
    options: { maintainAspectRatio: false, scales: { w: { position: "left", title: { display: true, text: "W" } },
      eff: { position: "right", grid: { drawOnChartArea: false }, title: { display: true, text: "samples/s/W" } } } },
  });
}

/** What a result's rate is and its unit: a model's samples/s, a GEMM's TFLOP/s, a copy's GB/s. */
function rate(r) {
  if (r.throughput_samples_per_s !== null && r.throughput_samples_per_s !== undefined) return [r.throughput_samples_per_s, "samples/s"];
  if (r.achieved_tflops !== null && r.achieved_tflops !== undefined) return [r.achieved_tflops, "TFLOP/s"];
  if (r.bandwidth_gb_per_s !== null && r.bandwidth_gb_per_s !== undefined) return [r.bandwidth_gb_per_s, "GB/s"];
  return [null, ""];
}

async function resultsTable(machineId, params, registry, heading) {
  const where = h("div", { class: "card", id: "results" });
  const filters = { workload: params.get("workload") || "", precision: params.get("precision") || "", runtime: params.get("runtime") || "" };
  const body = h("div");
  let latest = 0; // a slower answer to an earlier filter never overwrites a newer one
  const load = async (offset) => {
    const asked = ++latest;
    const results = await api("GET", "/results" + query({ machine_id: machineId, ...filters, limit: 50, offset }));
    if (asked !== latest) return;
    heading.textContent = `Results (${results.total})`; // the same count as the pager's, filters and all
    const rows = results.items.map((r) => {
      const [value, unit] = rate(r);
      return h("tr", {},
        td(r.variant ? h("span", { title: "a model variant: speed only; check accuracy on your data" }, workloadOf(r) + " " + r.variant) : workloadOf(r)),
        td(r.runtime), td(r.device), td(r.precision), td(r.batch_size, true), td(r.threads ?? "–", true),
        td(r.status === "ok" ? "" : h("span", { class: "error", text: r.status }), false),
        td(h("span", { class: "rate" }, fmt(value), unit ? h("span", { class: "muted small", text: " " + unit }) : null), true),
        td(fmt(r.latency_p99_ms, 2), true), td(fmt(r.mean_power_w), true), td(r.power_source));
    });
    body.replaceChildren(
      table(["workload", "runtime", "device", "precision", { label: "batch", num: 1 }, { label: "threads", num: 1 }, "",
        { label: "throughput", num: 1 }, { label: "p99 ms", num: 1 }, { label: "W", num: 1 }, "power from"], rows),
      pager(results, load));
  };
  // The filters are made once, so what someone types is never replaced by a reload.
  const inputs = ["workload", "runtime"].map((name) => {
    const input = h("input", { placeholder: name, value: filters[name], name });
    input.addEventListener("change", () => { filters[name] = input.value.trim(); load(0); });
    return input;
  });
  const precision = h("select", { name: "precision" }, h("option", { value: "", text: "any precision" }),
    options(registry.vocabulary.precisions, filters.precision));
  precision.addEventListener("change", () => { filters.precision = precision.value; load(0); });
  where.replaceChildren(h("div", { class: "toolbar" }, inputs, precision), body);
  await load(0);
  return where;
}
