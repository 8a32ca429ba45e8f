// Plan: a workload and a target (throughput, a training job or serving traffic) in; how many devices
// of each candidate reach it, what owning or renting them costs over time, and the rejected and why.

import { API, api, everyItem } from "../api.js";
import { chart, chartBox, COLORS } from "../charts.js";
import { deviceKindFields, deviceKindsOf, workloadFields, workloads } from "../choices.js";
import { badge, failure, fmt, h, options, table, td } from "../dom.js";

export const page = { name: "plan", title: "Plan", order: 35 };

// PlanObjective and the target kinds of app/contracts/plan.py (no plug-in family lists them)
const OBJECTIVES = ["cheapest", "fastest", "least_energy"];
const TARGETS = { none: "none (fewest devices that hold the model)", throughput: "throughput", job: "training job", serving: "serving" };
const TASK_OF = { job: "train", serving: "infer" }; // a target of these kinds needs this task

const DEFAULT = { workload: "resnet50", task: "train", scope: "catalog", objective: "cheapest",
  target: { job: { dataset_samples: 1281167, epochs: 90 } } };

export async function render(main, { params, registry }) {
  let spec = DEFAULT;
  if (params.get("spec")) { try { spec = JSON.parse(params.get("spec")); } catch (e) { /* keep the default */ } }
  const [zoo, catalog, clusters] = await Promise.all([workloads(registry), everyItem("/catalog"), api("GET", "/clusters")]);
  const form = planForm(spec, registry, zoo, catalog, clusters);
  const out = h("div", { id: "plan-result" });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    location.hash = "#/plan?" + new URLSearchParams({ spec: JSON.stringify(specFromForm(form)) });
  });
  main.replaceChildren(h("h1", { text: "Plan" }), form, out);
  if (params.get("spec")) await showPlan(out, spec);
}

const targetKind = (target) => (target?.job ? "job" : target?.serving ? "serving" : target?.throughput_samples_per_s ? "throughput" : "none");

/** An object without its null, undefined and empty-object members (the server's defaults apply to those). */
function compact(object) {
  const kept = {};
  for (const [k, v] of Object.entries(object)) {
    if (v === null || v === undefined) continue;
    if (typeof v === "object" && !Array.isArray(v)) {
      const inner = compact(v);
      if (Object.keys(inner).length) kept[k] = inner;
    } else kept[k] = v;
  }
  return kept;
}

function specFromForm(form) {
  const data = new FormData(form);
  const number = (name) => (data.get(name) === "" || data.get(name) === null ? null : Number(data.get(name)));
  const precisions = data.getAll("precision");
  const runtimes = String(data.get("runtimes") || "").split(",").map((s) => s.trim()).filter(Boolean);
  const kind = data.get("target_kind");
  const target = {
    throughput: { throughput_samples_per_s: number("throughput_samples_per_s") },
    job: { job: { dataset_samples: number("dataset_samples"), epochs: number("epochs"), deadline_hours: number("deadline_hours") } },
    serving: { serving: { request_rate_per_s: number("request_rate_per_s"), latency_p99_slo_ms: number("latency_p99_slo_ms") } },
  }[kind] || {};
  const part = String(data.get("cloud_part") || "").trim();
  const rate = number("cloud_usd_per_device_hour");
  return compact({
    workload: data.get("workload"), task: data.get("task"), objective: data.get("objective"), scope: data.get("scope"),
    batch_size: number("batch_size"),
    precisions: precisions.length ? precisions : null, runtimes: runtimes.length ? runtimes : null,
    device_kinds: deviceKindsOf(data), target,
    power_budget_w: number("power_budget_w"), system_power_budget_w: number("system_power_budget_w"),
    max_price_usd: number("max_price_usd"),
    costs: { period_years: number("period_years"), electricity_usd_per_kwh: number("electricity_usd_per_kwh"),
      utilisation: number("utilisation"), hosting_usd_per_kw_year: number("hosting_usd_per_kw_year"), system_usd: number("system_usd"),
      cloud_usd_per_device_hour: part && rate ? { [part]: rate } : null },
    cluster: data.get("declared")
      ? { declared: data.get("declared"), max_devices: number("max_devices") }
      : { devices_per_system: number("devices_per_system"), network_gb_s: number("network_gb_s"), max_devices: number("max_devices") },
    limit: 20,
  });
}

function planForm(spec, registry, zoo, catalog, clusters) {
  const t = spec.target || {};
  const costs = spec.costs || {};
  const cluster = spec.cluster || {};
  const [cloudPart, cloudRate] = Object.entries(costs.cloud_usd_per_device_hour || {})[0] || ["", null];
  // an empty field is the server's default, which the placeholder shows (and Plan.assumptions lists)
  const field = (name, text, value, attrs) => h("label", {}, text, h("input", { name, type: "number", step: "any", min: "0", value: value ?? "", ...attrs }));
  const kind = targetKind(t);
  const kindSelect = h("select", { name: "target_kind", id: "plan-target" }, options(Object.keys(TARGETS), kind, (k) => TARGETS[k]));
  const targets = {
    throughput: h("div", { class: "row", "data-target": "throughput" },
      field("throughput_samples_per_s", "samples/s in all", t.throughput_samples_per_s)),
    job: h("div", { class: "row", "data-target": "job" },
      field("dataset_samples", "dataset samples", t.job?.dataset_samples, { min: "1", step: "1" }),
      field("epochs", "epochs", t.job?.epochs, { placeholder: "1" }),
      field("deadline_hours", "deadline h", t.job?.deadline_hours, { placeholder: "none" })),
    serving: h("div", { class: "row", "data-target": "serving" },
      field("request_rate_per_s", "requests/s", t.serving?.request_rate_per_s),
      field("latency_p99_slo_ms", "p99 SLO ms", t.serving?.latency_p99_slo_ms, { placeholder: "none" })),
  };
  const [workloadLabel, taskLabel] = workloadFields(zoo, spec.workload, spec.task);
  const taskSelect = taskLabel.querySelector("select");
  const showTarget = () => {
    for (const [k, row] of Object.entries(targets)) row.hidden = k !== kindSelect.value;
    const needed = TASK_OF[kindSelect.value];
    if (needed && [...taskSelect.options].some((o) => o.value === needed)) taskSelect.value = needed;
  };
  kindSelect.addEventListener("change", showTarget);
  for (const [k, row] of Object.entries(targets)) row.hidden = k !== kind;
  const parts = h("datalist", { id: "plan-catalog-ids" }, catalog.map((e) => h("option", { value: e.id, label: e.name })));
  // a declared cluster (hwadvisor clusters create) brings its own network and devices per system
  const described = [field("devices_per_system", "devices per system", cluster.devices_per_system, { placeholder: "8", min: "1", step: "1" }),
    field("network_gb_s", "network GB/s per device", cluster.network_gb_s, { placeholder: "25" })];
  const clusterSelect = h("select", { name: "declared", id: "plan-cluster" },
    options(["", ...clusters.map((c) => c.name)], cluster.declared || "", (name) => {
      const c = clusters.find((found) => found.name === name);
      return c ? `${c.name}: ${c.devices} devices on ${c.machines.length} machines, ${fmt(c.network_gb_s)} GB/s` : "described here";
    }));
  const showCluster = () => { for (const label of described) label.hidden = clusterSelect.value !== ""; };
  clusterSelect.addEventListener("change", showCluster);
  showCluster();
  return h("form", { class: "card", id: "plan-form" },
    h("div", { class: "row" },
      workloadLabel, taskLabel,
      h("label", {}, "objective", h("select", { name: "objective" }, options(OBJECTIVES, spec.objective, (o) => o.replaceAll("_", " ")))),
      field("batch_size", "batch per device", spec.batch_size, { placeholder: "free", min: "1", step: "1" }),
      h("label", {}, h("input", { type: "radio", name: "scope", value: "owned", checked: spec.scope === "owned" }), "machines we own"),
      h("label", {}, h("input", { type: "radio", name: "scope", value: "catalog", checked: spec.scope !== "owned" }), "also catalog hardware")),
    h("div", { class: "row" }, h("label", {}, "target", kindSelect)),
    Object.values(targets),
    h("div", { class: "row" },
      field("power_budget_w", "power budget W/device", spec.power_budget_w),
      field("system_power_budget_w", "system budget W", spec.system_power_budget_w),
      field("max_price_usd", "max purchase $", spec.max_price_usd),
      h("label", {}, "cluster", clusterSelect),
      described,
      field("max_devices", "max devices", cluster.max_devices, { placeholder: "64", min: "1", step: "1" })),
    h("div", { class: "row" },
      field("period_years", "period years", costs.period_years, { placeholder: "3", min: "0.1" }),
      field("electricity_usd_per_kwh", "$/kWh", costs.electricity_usd_per_kwh, { placeholder: "0.15" }),
      field("utilisation", "utilisation", costs.utilisation, { placeholder: "1", max: "1" }),
      field("hosting_usd_per_kw_year", "hosting $/kW/year", costs.hosting_usd_per_kw_year, { placeholder: "0" }),
      field("system_usd", "$ per system", costs.system_usd, { placeholder: "0" })),
    h("div", { class: "row" },
      h("label", {}, "cloud price for part", h("input", { name: "cloud_part", list: "plan-catalog-ids", placeholder: "catalog id, e.g. h100-sxm5-80gb", value: cloudPart })),
      field("cloud_usd_per_device_hour", "$/device-hour", cloudRate),
      parts),
    h("div", { class: "row" },
      h("span", { class: "muted", text: "precisions:" }),
      registry.vocabulary.precisions.map((p) => h("label", {}, h("input", { type: "checkbox", name: "precision", value: p, checked: (spec.precisions || []).includes(p) }), p)),
      h("label", {}, "runtimes", h("input", { name: "runtimes", placeholder: "any (comma-separated)", value: (spec.runtimes || []).join(", ") })),
      deviceKindFields(registry, spec.device_kinds),
      h("button", { type: "submit", id: "plan-submit" }, "Plan")));
}

const usd = (value, digits = 0) => (value === null || value === undefined ? "–" : "$" + fmt(value, digits));
const where = (hw) => (hw.owned ? `${hw.machine_name} ${hw.device}` : "catalog");

/** An API error as the other pages show it, with a refused field's message where the server gave one. */
function problem(out, error) {
  failure(out, error);
  const fields = error.problem?.errors || [];
  if (fields.length) out.append(h("ul", { class: "small" }, fields.map((f) => h("li", { text: `${f.field}: ${f.message}` }))));
}

async function showPlan(out, spec) {
  out.replaceChildren(h("p", { class: "muted", text: "Planning…" }));
  let plan;
  try { plan = await api("POST", "/plans", spec); } catch (e) { problem(out, e); return; }
  const job = plan.query.target.job !== null && plan.query.target.job !== undefined;
  const breakdown = h("div", { class: "card", id: "plan-breakdown" });
  const { box, canvas } = chartBox("Cumulative cost by month, owned and rented", true);
  box.id = "chart-cost";
  canvas.setAttribute("role", "img");
  const caption = h("p", { class: "muted small", id: "chart-cost-caption" });
  box.append(caption);
  let costChart = null;
  let selected = null;
  const select = (row, candidate) => {
    if (selected) { selected.classList.remove("selected"); selected.removeAttribute("aria-current"); }
    selected = row;
    row.classList.add("selected");
    row.setAttribute("aria-current", "true");
    showBreakdown(breakdown, candidate, plan.query);
    const data = costSeries(candidate);
    caption.textContent = `${candidate.hardware.name}, ${candidate.devices} device${candidate.devices === 1 ? "" : "s"}`
      + (data.every((d) => !d.data.length) ? ": no purchase price and no cloud rate, nothing to chart" : "");
    const last = candidate.cost_over_time.at(-1);
    canvas.setAttribute("aria-label", last ? `${caption.textContent}: by month ${last.month} owned ${usd(last.owned_usd)}, rented ${usd(last.cloud_usd)}` : caption.textContent);
    if (costChart) { costChart.data.datasets = data; costChart.update(); } else costChart = drawCost(canvas, data);
  };
  const rows = plan.candidates.map((c) => {
    const row = h("tr", { class: "candidate", "data-rank": c.rank, tabindex: "0" },
      td(c.rank, true), td(h("span", {}, c.hardware.name, h("div", { class: "muted small", text: where(c.hardware) }))),
      td(c.runtime), td(c.precision), td(c.batch_size, true), td(c.devices, true), td(c.systems, true), td(c.parallelism.replaceAll("_", " ")),
      td(h("span", {}, fmt(c.throughput_samples_per_s), h("span", { class: "muted small", text: ` ±${fmt(c.error_pct, 0)}% ` }), badge(c.estimate.kind)), true),
      td(fmt(c.scaling_efficiency * 100, 0) + "%", true),
      job ? td(fmt(c.job?.time_to_train_hours, 1), true) : null,
      td(`${fmt(c.memory_needed_gb)} / ${fmt(c.memory_gb)}`, true), td(fmt(c.system_power_w, 0), true),
      td(usd(c.costs.purchase_usd), true), td(usd(c.costs.energy_usd), true), td(usd(c.costs.hosting_usd), true),
      td(h("strong", { text: usd(c.costs.total_usd) }), true), td(usd(c.costs.cloud_usd), true));
    row.addEventListener("click", () => select(row, c));
    row.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); select(row, c); }
    });
    return row;
  });
  const headers = [{ label: "#", num: 1 }, "hardware", "runtime", "precision", { label: "batch", num: 1 }, { label: "devices", num: 1 },
    { label: "systems", num: 1 }, "parallelism", { label: "samples/s", num: 1 }, { label: "scaling", num: 1 },
    job ? { label: "train h", num: 1 } : null, { label: "memory GB need / has", num: 1 }, { label: "system W", num: 1 },
    { label: "purchase", num: 1 }, { label: "energy", num: 1 }, { label: "hosting", num: 1 },
    { label: `total ${fmt(plan.query.costs.period_years)} y`, num: 1 }, { label: "cloud", num: 1 }].filter(Boolean);
  const rejected = plan.rejected.slice(0, 100).map((r) => h("tr", {},
    td(r.hardware.name), td(where(r.hardware)), td(`${r.runtime} ${r.precision} b${r.batch_size}`), td(r.devices, true),
    td(r.reasons.map((reason) => reason.text).join("; "))));
  const body = JSON.stringify(spec);
  const curl = `curl -s -X POST ${location.origin}${API}/plans \\\n  -H "Authorization: Bearer $HWADVISOR_TOKEN" -H "Content-Type: application/json" \\\n  -d '${body}'`;
  out.replaceChildren(
    h("div", { class: plan.notes.length ? "card" : null, id: "plan-notes" }, plan.notes.map((n) => h("p", { class: "muted small", text: n }))),
    h("div", { class: "card", id: "plan-candidates" }, h("h2", { text: `Ranked (${plan.candidates.length})` }),
      plan.candidates.length
        ? [h("p", { class: "muted small", text: "Select a row for its cost over time and its breakdown." }), h("div", { class: "scroll" }, table(headers, rows))]
        : h("p", { class: "muted", text: "No candidate reaches the target within the limits; see the rejected below." })),
    ...(plan.candidates.length ? [h("div", { class: "grid2" }, box, breakdown)] : []), // replaceChildren writes a null as "null"
    h("div", { class: "card", id: "plan-assumptions" }, h("h2", { text: "Assumptions" }),
      h("ul", {}, plan.assumptions.map((a) => h("li", { text: a })))),
    h("div", { class: "card", id: "plan-rejected" }, h("h2", { text: `Rejected (${plan.rejected.length})` }),
      // open when nothing was ranked: then the reasons are the answer
      h("details", { open: !plan.candidates.length }, h("summary", { text: plan.rejected.length > 100 ? "the first 100 and why" : "which and why" }),
        table(["hardware", "where", "config", { label: "devices", num: 1 }, "why"], rejected))),
    h("div", { class: "card" }, h("h2", { text: "The same query through the REST API" }), h("pre", { id: "plan-rest", text: curl })));
  if (plan.candidates.length) select(rows[0], plan.candidates[0]);
}

/** The owned and the rented line of a candidate's cost_over_time; a line without a figure is left out. */
function costSeries(c) {
  const line = (key, label, color, dash) => ({ type: "line", label, borderColor: color, backgroundColor: color, borderDash: dash,
    pointRadius: 0, fill: false, data: c.cost_over_time.filter((p) => p[key] !== null).map((p) => ({ x: p.month, y: p[key] })) });
  return [line("owned_usd", "owned (purchase, energy, hosting)", COLORS[0], []), line("cloud_usd", "rented (cloud)", COLORS[1], [6, 4])];
}

function drawCost(canvas, datasets) {
  return chart(canvas, {
    type: "line",
    data: { datasets },
    options: { maintainAspectRatio: false, parsing: true,
      scales: { x: { type: "linear", min: 0, title: { display: true, text: "month" } },
        y: { type: "linear", beginAtZero: true, title: { display: true, text: "cumulative $" } } },
      plugins: { tooltip: { callbacks: { label: (item) => `${item.dataset.label}: ${usd(item.raw.y)} by month ${fmt(item.raw.x, 0)}` } } } },
  });
}

/** The selected candidate: its configuration, what it costs and why, in words. */
function showBreakdown(card, c, query) {
  const item = (term, ...value) => [h("dt", { text: term }), h("dd", {}, ...value)];
  const k = c.costs;
  const price = c.price ? `${usd(c.price.usd)} per device, ${c.price.label}` : "no price";
  card.replaceChildren(
    h("h2", { text: `#${c.rank} ${c.hardware.name}` }),
    h("dl", { class: "spec" },
      item("where", where(c.hardware)),
      item("config", `${c.runtime} ${c.precision}, batch ${c.batch_size} per device`),
      item("devices", `${c.devices} in ${c.systems} system${c.systems === 1 ? "" : "s"}, ${c.parallelism.replaceAll("_", " ")}`
        + (c.link ? ` over ${c.link}` : "")),
      item("throughput", `${fmt(c.throughput_samples_per_s)} samples/s in all ±${fmt(c.error_pct, 0)}% `
        + `(${fmt(c.estimate.throughput_samples_per_s)} per device ±${fmt(c.estimate.error_pct, 0)}%, scaling ${fmt(c.scaling_efficiency * 100, 0)}%)`),
      c.latency_p99_ms !== null && c.latency_p99_ms !== undefined ? item("p99 latency", `${fmt(c.latency_p99_ms, 2)} ms`) : null,
      item("memory", `${fmt(c.memory_needed_gb)} GB needed per device, ${fmt(c.memory_gb)} GB on it`),
      item("power", `${fmt(c.power_w, 0)} W per device, ${fmt(c.system_power_w, 0)} W in all, ${fmt(c.energy_per_sample_j, 3)} J per sample`),
      item("price", price),
      item(`over ${fmt(k.period_years)} years`, `${fmt(k.running_hours, 0)} running hours: purchase ${usd(k.purchase_usd)}, energy `
        + `${fmt(k.energy_kwh, 0)} kWh ${usd(k.energy_usd)}, hosting ${usd(k.hosting_usd)}; total ${usd(k.total_usd)}`),
      k.cloud_usd_per_hour !== null && k.cloud_usd_per_hour !== undefined
        ? item("rented", `$${fmt(k.cloud_usd_per_hour, 2)}/h for all devices, ${usd(k.cloud_usd)} for the same hours`) : null,
      c.job ? item("training job", `${fmt(c.job.time_to_train_hours, 1)} h, ${fmt(c.job.energy_kwh, 1)} kWh ${usd(c.job.energy_usd, 2)}; `
        + `owned ${usd(c.job.owned_usd, 2)}, rented ${usd(c.job.cloud_usd, 2)}`
        + (query.target.job.deadline_hours ? ` (deadline ${fmt(query.target.job.deadline_hours)} h)` : "")) : null,
      item("estimate", badge(c.estimate.kind), " ", h("span", { class: "small", text: c.estimate.source })),
      item("why", h("span", { class: "explain", text: c.estimate.explanation }))),
    h("ul", { class: "plan-notes" }, c.notes.map((n) => h("li", { text: n.text }))));
}
