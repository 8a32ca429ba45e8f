// The hwadvisor dashboard: plain JavaScript over the REST API (/api/v1), hash-routed pages.
// Data is put into the page with textContent only (never innerHTML), so nothing a machine reports
// can become markup. Charts: Chart.js (window.Chart), installed from npm by ./scripts/setup.
"use strict";

const API = "/api/v1";
const state = { kind: null, charts: [], timer: null };
const KINDS = ["measured", "interpolated", "predicted"];
const STATUSES = ["pending", "online", "busy", "offline"];
const COLORS = ["#2457c5", "#e8590c", "#2f9e44", "#ae3ec9", "#1098ad", "#f59f00", "#c92a2a", "#5c7cfa", "#868e96"];

// ------------------------------------------------------------------ helpers

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "text") el.textContent = value;
    else if (key === "class") el.className = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function cookie(name) {
  const found = document.cookie.split("; ").find((c) => c.startsWith(name + "="));
  return found ? decodeURIComponent(found.slice(name.length + 1)) : "";
}

class ApiError extends Error {
  constructor(status, detail) { super(detail); this.status = status; }
}

async function api(method, path, body, contentType) {
  const headers = { "X-CSRF-Token": cookie("hwa_csrf") };
  let payload;
  if (body !== undefined) {
    headers["Content-Type"] = contentType || "application/json";
    payload = contentType ? body : JSON.stringify(body);
  }
  const response = await fetch(API + path, { method, headers, body: payload, credentials: "same-origin" });
  if (response.status === 204) return null;
  const data = response.headers.get("content-type")?.includes("json") ? await response.json() : await response.text();
  if (!response.ok) {
    if (response.status === 401) { state.kind = null; showLogin(); }
    throw new ApiError(response.status, (data && data.detail) || response.statusText);
  }
  return data;
}

// one formatter per precision: Number.toLocaleString with options builds a new one per call (slow in tables)
const formats = new Map();
function fmt(value, digits = 1) {
  if (value === null || value === undefined) return "–";
  if (!formats.has(digits)) formats.set(digits, new Intl.NumberFormat("en-US", { maximumFractionDigits: digits }));
  return formats.get(digits).format(Number(value));
}
const isAdmin = () => state.kind === "admin";
const badge = (text, cls) => h("span", { class: "badge " + (cls || text), text });
const query = (params) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== "" && v !== null && v !== undefined) q.set(k, v);
  const s = q.toString();
  return s ? "?" + s : "";
};

function ago(iso) {
  if (!iso) return "never";
  const seconds = (Date.now() - Date.parse(iso)) / 1000;
  if (seconds < 90) return Math.max(0, Math.round(seconds)) + " s ago";
  if (seconds < 5400) return Math.round(seconds / 60) + " min ago";
  if (seconds < 129600) return Math.round(seconds / 3600) + " h ago";
  return Math.round(seconds / 86400) + " days ago";
}

function table(headers, rows) {
  return h("table", {},
    h("thead", {}, h("tr", {}, headers.map((c) => h("th", { class: c.num ? "num" : null, text: c.label || c })))),
    h("tbody", {}, rows));
}

function td(content, num) {
  return h("td", { class: num ? "num" : null }, content);
}

function failure(where, error) {
  where.replaceChildren(h("p", { class: "error", text: error.message }));
}

function chart(canvas, config) {
  const instance = new window.Chart(canvas, config);
  state.charts.push(instance);
  return instance;
}

function chartBox(title, tall) {
  const canvas = h("canvas", {});
  const box = h("div", { class: "card" }, h("h2", { text: title }), h("div", { class: "chart" + (tall ? " tall" : "") }, canvas));
  return { box, canvas };
}

function pager(page, onMove) {
  const first = page.offset + 1, last = Math.min(page.offset + page.limit, page.total);
  return h("div", { class: "pager" },
    h("button", { class: "secondary", disabled: page.offset === 0, onclick: () => onMove(Math.max(0, page.offset - page.limit)) }, "‹ prev"),
    h("span", { class: "muted", text: page.total ? `${first}–${last} of ${page.total}` : "none" }),
    h("button", { class: "secondary", disabled: last >= page.total, onclick: () => onMove(page.offset + page.limit) }, "next ›"));
}

// ------------------------------------------------------------------ login

function showLogin(message) {
  const main = document.getElementById("main");
  document.getElementById("who").replaceChildren();
  const input = h("input", { type: "password", id: "token", autocomplete: "current-password", placeholder: "hwa_admin_… or hwa_readonly_…" });
  const error = h("p", { class: "error", id: "login-error", text: message || "" });
  const form = h("form", { class: "card login", id: "login" },
    h("h1", { text: "Log in" }),
    h("p", { class: "muted", text: "With the admin token, or a read-only key (hwadvisor token create readonly): read-only keys can look but not change anything." }),
    input, error, h("button", { type: "submit" }, "Log in"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await api("POST", "/session", { token: input.value.trim() });
      await whoAmI();
      route();
    } catch (e) { error.textContent = e.message; }
  });
  main.replaceChildren(form);
  input.focus();
}

async function whoAmI() {
  try { state.kind = (await api("GET", "/session")).kind; } catch (e) { state.kind = null; }
  const who = document.getElementById("who");
  if (!state.kind) { who.replaceChildren(); return; }
  who.replaceChildren(
    h("span", { text: state.kind === "admin" ? "admin" : "read-only" }),
    h("button", { class: "secondary", onclick: async () => { await api("DELETE", "/session"); state.kind = null; showLogin(); } }, "Log out"));
}

// ------------------------------------------------------------------ fleet

async function fleetPage(main, params) {
  const status = params.get("status") || "";
  const search = params.get("search") || "";
  const offset = Number(params.get("offset") || 0);
  const go = (changes) => {
    const next = new URLSearchParams({ status, search, offset: 0, ...changes });
    for (const [k, v] of [...next]) if (!v || v === "0") next.delete(k);
    location.hash = "#/fleet" + (next.toString() ? "?" + next : "");
  };
  const counts = await Promise.all(STATUSES.map((s) => api("GET", "/machines" + query({ status: s, limit: 1 }))));
  const page = await api("GET", "/machines" + query({ status, search, limit: 50, offset }));
  const searchBox = h("input", { type: "search", placeholder: "hostname contains…", value: search, id: "fleet-search" });
  searchBox.addEventListener("change", () => go({ search: searchBox.value }));
  const filters = h("div", { class: "toolbar" },
    h("button", { class: status ? "secondary" : null, onclick: () => go({ status: "" }) }, "all"),
    STATUSES.map((s, i) => h("button", { class: status === s ? null : "secondary", onclick: () => go({ status: s }) }, `${s} (${counts[i].total})`)),
    searchBox);
  const rows = page.items.map((m) => h("tr", { "data-machine": m.id },
    td(h("a", { href: "#/machine/" + m.id, text: m.hostname })),
    td(badge(m.status)),
    td(m.hardware || "–"),
    td(h("span", { class: "small muted", text: Object.entries(m.labels).map(([k, v]) => `${k}=${v}`).join("  ") })),
    td(ago(m.last_seen_at)),
    td(m.status === "pending" && isAdmin()
      ? h("button", { onclick: async () => { await api("POST", `/machines/${m.id}/approve`); route(); } }, "Approve")
      : null)));
  main.replaceChildren(
    h("h1", { text: "Fleet" }),
    enrolCard(),
    h("div", { class: "card" }, filters,
      table(["hostname", "status", "hardware", "labels", "last seen", ""], rows),
      pager(page, (o) => go({ offset: o }))));
}

function enrolCard() {
  const out = h("div", { id: "enrol-command" });
  const make = async () => {
    try {
      const issued = await api("POST", "/tokens", { kind: "enrollment", note: "dashboard", max_uses: 1, expires_in_hours: 24 });
      out.replaceChildren(
        h("p", { class: "muted", text: "On the new machine (token: one use, 24 hours):" }),
        h("pre", { text: `hwadvisor agent enroll --server ${location.origin} --token ${issued.token}\nhwadvisor agent run` }));
    } catch (e) { failure(out, e); }
  };
  return h("div", { class: "card" },
    h("h2", { text: "Enrol a machine" }),
    h("p", { class: "muted", text: "Install hwadvisor on it (./scripts/setup), then run the command below; it appears here as pending until approved." }),
    isAdmin() ? h("button", { id: "new-enrollment", onclick: make }, "New enrollment token") : h("p", { class: "muted", text: "An admin makes enrollment tokens." }),
    out);
}

// ------------------------------------------------------------------ machine

async function machinePage(main, id, params) {
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
    h("dt", { text: "software" }), h("dd", { text: spec.software ? Object.entries(spec.software).filter(([, v]) => typeof v === "string").map(([k, v]) => `${k} ${v}`).join(" · ") : "–" }),
    h("dt", { text: "labels" }), h("dd", { text: Object.entries(machine.labels).map(([k, v]) => `${k}=${v}`).join(", ") || "–" }),
    h("dt", { text: "last seen" }), h("dd", { text: ago(machine.last_seen_at) }));

  const models = all.filter((r) => r.workload.includes("/"));
  const charts = h("div", { class: "grid2" });
  main.replaceChildren(h("h1", { text: machine.hostname }), h("div", { class: "card" }, info), charts,
    h("h2", { text: `Results (${total})` }), await resultsTable(id, params));
  if (!models.length) {
    charts.replaceChildren(h("p", { class: "muted", text: "No model results yet: schedule a suite on the Jobs page." }));
    return;
  }
  drawByWorkload(charts, models);
  drawVsBatch(charts, models);
  drawThreads(charts, models);
  drawPower(charts, models);
}

const label = (r) => `${r.workload} ${r.runtime} ${r.precision}`;

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
  const workloads = [...new Set(results.map((r) => r.workload))].sort();
  const precisions = [...new Set(results.map((r) => r.precision))].sort();
  const top = best(results, (r) => r.workload + "|" + r.precision);
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
  if (!new Set(cpu.map((r) => r.threads)).size) {
    box.querySelector(".chart").replaceWith(h("p", { class: "muted", text: "No CPU results with thread counts." }));
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
    box.querySelector(".chart").replaceWith(h("p", { class: "muted", text: "No result with a power reading." }));
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

async function resultsTable(machineId, params) {
  const where = h("div", { class: "card", id: "results" });
  const filters = { workload: params.get("workload") || "", precision: params.get("precision") || "", runtime: params.get("runtime") || "" };
  const load = async (offset) => {
    const page = await api("GET", "/results" + query({ machine_id: machineId, ...filters, limit: 50, offset }));
    const inputs = ["workload", "runtime"].map((name) => {
      const input = h("input", { placeholder: name, value: filters[name], name });
      input.addEventListener("change", () => { filters[name] = input.value.trim(); load(0); });
      return input;
    });
    const precision = h("select", { name: "precision" }, h("option", { value: "", text: "any precision" }),
      ["fp32", "tf32", "bf16", "fp16", "int8"].map((p) => h("option", { value: p, text: p, selected: filters.precision === p })));
    precision.addEventListener("change", () => { filters.precision = precision.value; load(0); });
    const rows = page.items.map((r) => h("tr", {},
      td(r.workload), td(r.runtime), td(r.device), td(r.precision), td(r.batch_size, true), td(r.threads ?? "–", true),
      td(r.status === "ok" ? "" : h("span", { class: "error", text: r.status }), false),
      td(fmt(r.throughput_samples_per_s ?? r.achieved_tflops ?? r.bandwidth_gb_per_s), true),
      td(fmt(r.latency_p99_ms, 2), true), td(fmt(r.mean_power_w), true), td(r.power_source)));
    where.replaceChildren(h("div", { class: "toolbar" }, inputs, precision),
      table(["workload", "runtime", "device", "precision", { label: "batch", num: 1 }, { label: "threads", num: 1 }, "",
        { label: "throughput", num: 1 }, { label: "p99 ms", num: 1 }, { label: "W", num: 1 }, "power from"], rows),
      pager(page, load));
  };
  await load(0);
  return where;
}

// ------------------------------------------------------------------ recommend

const ZOO = ["resnet50", "bert_base", "mobilenet_v2", "resnet56", "alexnet", "lstm", "fcn_s", "fcn_r",
  "bert_base_squad", "bert_large_squad", "gnmt", "bert_base_cased"];
const OBJECTIVES = ["throughput", "latency", "throughput_per_watt", "cost_per_million_samples", "energy_per_sample"];

function specFromForm(form) {
  const data = new FormData(form);
  const number = (name) => (data.get(name) === "" || data.get(name) === null ? null : Number(data.get(name)));
  const precisions = data.getAll("precision");
  const runtimes = String(data.get("runtimes") || "").split(",").map((s) => s.trim()).filter(Boolean);
  const constraints = {
    power_budget_w: number("power_budget_w"), system_power_budget_w: number("system_power_budget_w"),
    device_count: number("device_count") || 1, latency_p99_slo_ms: number("latency_p99_slo_ms"),
    min_throughput_samples_per_s: number("min_throughput_samples_per_s"), max_price_usd: number("max_price_usd"),
    precisions: precisions.length ? precisions : null, runtimes: runtimes.length ? runtimes : null,
  };
  for (const k of Object.keys(constraints)) if (constraints[k] === null) delete constraints[k];
  const spec = { workload: data.get("workload"), task: data.get("task"), objective: data.get("objective"),
    scope: data.get("scope"), constraints, limit: 50 };
  if (number("batch_size")) spec.batch_size = number("batch_size");
  return spec;
}

function recommendForm(spec) {
  const c = spec.constraints || {};
  const field = (name, text, value, attrs) => h("label", {}, text, h("input", { name, type: "number", step: "any", min: "0", value: value ?? "", ...attrs }));
  return h("form", { class: "card", id: "recommend-form" },
    h("div", { class: "row" },
      h("label", {}, "workload", h("select", { name: "workload" }, ZOO.map((w) => h("option", { value: w, text: w, selected: spec.workload === w })))),
      h("label", {}, "task", h("select", { name: "task" }, ["infer", "train"].map((t) => h("option", { value: t, text: t, selected: spec.task === t })))),
      h("label", {}, "objective", h("select", { name: "objective" }, OBJECTIVES.map((o) => h("option", { value: o, text: o.replaceAll("_", " "), selected: spec.objective === o })))),
      field("batch_size", "batch", spec.batch_size, { placeholder: "free", min: "1", step: "1" })),
    h("div", { class: "row" },
      field("power_budget_w", "power budget W/device", c.power_budget_w),
      field("system_power_budget_w", "system budget W", c.system_power_budget_w),
      field("device_count", "devices", c.device_count ?? 1, { min: "1", step: "1" }),
      field("latency_p99_slo_ms", "p99 SLO ms", c.latency_p99_slo_ms),
      field("min_throughput_samples_per_s", "min samples/s", c.min_throughput_samples_per_s),
      field("max_price_usd", "max price $", c.max_price_usd)),
    h("div", { class: "row" },
      h("span", { class: "muted", text: "precisions:" }),
      ["fp32", "tf32", "bf16", "fp16", "int8"].map((p) => h("label", {}, h("input", { type: "checkbox", name: "precision", value: p, checked: (c.precisions || []).includes(p) }), p)),
      h("label", {}, "runtimes", h("input", { name: "runtimes", placeholder: "any (comma-separated)", value: (c.runtimes || []).join(", ") })),
      h("label", {}, h("input", { type: "radio", name: "scope", value: "owned", checked: spec.scope !== "catalog" }), "machines we own"),
      h("label", {}, h("input", { type: "radio", name: "scope", value: "catalog", checked: spec.scope === "catalog" }), "also catalog hardware"),
      h("button", { type: "submit", id: "recommend-submit" }, "Recommend")));
}

async function recommendPage(main, params) {
  let spec = { workload: "resnet50", task: "infer", objective: "throughput", scope: "catalog", constraints: {} };
  if (params.get("spec")) { try { spec = JSON.parse(params.get("spec")); } catch (e) { /* keep the default */ } }
  const form = recommendForm(spec);
  const out = h("div", { id: "recommend-result" });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    location.hash = "#/recommend?" + new URLSearchParams({ spec: JSON.stringify(specFromForm(form)) });
  });
  main.replaceChildren(h("h1", { text: "Recommend" }), form, out);
  if (params.get("spec")) await showRecommendation(out, spec);
}

function estimateCell(e) {
  return h("span", {}, fmt(e.throughput_samples_per_s), h("span", { class: "muted small", text: ` ±${fmt(e.error_pct, 0)}%` }));
}

async function showRecommendation(out, spec) {
  out.replaceChildren(h("p", { class: "muted", text: "Asking the recommender…" }));
  let answer;
  try { answer = await api("POST", "/recommendations", spec); } catch (e) { failure(out, e); return; }
  const where = (c) => (c.hardware.owned ? `${c.hardware.machine_name} ${c.hardware.device}` : "catalog");
  const rows = answer.candidates.map((c) => h("tr", { class: "candidate" },
    td(c.rank, true), td(h("span", {}, c.hardware.name, h("div", { class: "explain", text: c.estimate.explanation }))), td(where(c)),
    td(c.runtime), td(c.precision), td(c.batch_size, true), td(c.threads ?? "–", true),
    td(estimateCell(c.estimate), true), td(fmt(c.estimate.latency_p99_ms, 2), true),
    td(h("span", {}, fmt(c.estimate.power_w, 0), h("span", { class: "muted small", text: c.estimate.power_basis && c.estimate.power_basis !== "measured" ? " " + c.estimate.power_basis : "" })), true),
    td(fmt(c.throughput_per_w, 2), true), td(fmt(c.cost_per_million_samples_usd, 2), true),
    td(h("span", {}, badge(c.estimate.kind), " ", c.pareto ? badge("pareto") : null)), td(h("span", { class: "small", text: c.estimate.source }))));
  const rejected = answer.rejected.slice(0, 100).map((r) => h("tr", {},
    td(r.hardware.name), td(r.hardware.owned ? r.hardware.machine_name : "catalog"), td(`${r.runtime} ${r.precision} b${r.batch_size}`),
    td(badge(r.estimate.kind)), td(r.reasons.join("; "))));
  const { box, canvas } = chartBox("Throughput vs power per device (error bars: the estimate's band; line: Pareto front)", true);
  box.id = "chart-pareto";
  const body = JSON.stringify(spec);
  const curl = `curl -s -X POST ${location.origin}${API}/recommendations \\\n  -H "Authorization: Bearer $HWADVISOR_TOKEN" -H "Content-Type: application/json" \\\n  -d '${body}'`;
  out.replaceChildren(
    h("div", { class: answer.notes.length ? "card" : null, id: "notes" }, answer.notes.map((n) => h("p", { class: "muted small", text: n }))),
    box,
    h("div", { class: "card" }, h("h2", { text: `Ranked (${answer.candidates.length})` }),
      answer.candidates.length ? table([{ label: "#", num: 1 }, "hardware", "where", "runtime", "precision", { label: "batch", num: 1 }, { label: "threads", num: 1 },
        { label: "samples/s", num: 1 }, { label: "p99 ms", num: 1 }, { label: "W", num: 1 }, { label: "per W", num: 1 }, { label: "$ / M", num: 1 }, "estimate", "source"], rows)
        : h("p", { class: "muted", text: "No candidate meets the constraints; see the rejected below." })),
    h("div", { class: "card", id: "rejected" }, h("h2", { text: `Rejected (${answer.rejected.length})` }),
      table(["hardware", "where", "config", "estimate", "why"], rejected)),
    h("div", { class: "card" }, h("h2", { text: "The same query through the REST API" }), h("pre", { id: "rest-query", text: curl })));
  drawPareto(canvas, answer.candidates);
}

const errorBars = {
  id: "errorBars",
  afterDatasetsDraw(instance) {
    const { ctx } = instance;
    instance.data.datasets.forEach((dataset, i) => {
      if (!dataset.bands) return;
      const meta = instance.getDatasetMeta(i);
      ctx.save();
      ctx.strokeStyle = dataset.borderColor;
      meta.data.forEach((point, j) => {
        const [low, high] = dataset.bands[j];
        const y = instance.scales.y;
        ctx.beginPath();
        ctx.moveTo(point.x, y.getPixelForValue(low));
        ctx.lineTo(point.x, y.getPixelForValue(high));
        ctx.stroke();
      });
      ctx.restore();
    });
  },
};

function drawPareto(canvas, candidates) {
  const withPower = candidates.filter((c) => c.estimate.power_w !== null);
  const datasets = KINDS.map((kind, i) => {
    const of = withPower.filter((c) => c.estimate.kind === kind);
    return { type: "scatter", label: kind, borderColor: COLORS[i], backgroundColor: COLORS[i],
      data: of.map((c) => ({ x: c.estimate.power_w, y: c.estimate.throughput_samples_per_s, name: `${c.hardware.name} ${c.precision} b${c.batch_size}` })),
      bands: of.map((c) => [c.estimate.throughput_low, c.estimate.throughput_high]) };
  });
  const front = withPower.filter((c) => c.pareto).sort((a, b) => a.estimate.power_w - b.estimate.power_w);
  datasets.push({ type: "line", label: "Pareto front", borderColor: "#5b21b6", borderDash: [6, 4], pointRadius: 0, fill: false,
    data: front.map((c) => ({ x: c.estimate.power_w, y: c.estimate.throughput_samples_per_s })) });
  chart(canvas, {
    data: { datasets },
    plugins: [errorBars],
    options: { maintainAspectRatio: false, parsing: true,
      scales: { x: { type: "linear", title: { display: true, text: "power per device (W)" } }, y: { type: "linear", title: { display: true, text: "samples/s per device" } } },
      plugins: { tooltip: { callbacks: { label: (item) => `${item.raw.name || "front"}: ${fmt(item.raw.y)}/s at ${fmt(item.raw.x, 0)} W` } } } },
  });
}

// ------------------------------------------------------------------ compare

async function comparePage(main, params) {
  const chosen = (params.get("hw") || "").split(",").filter(Boolean);
  const workload = params.get("workload") || "resnet50";
  const task = params.get("task") || "infer";
  const machines = (await api("GET", "/machines" + query({ limit: 200 }))).items;
  const catalog = await api("GET", "/catalog");
  const options = [
    ...machines.flatMap((m) => (m.hardware ? [{ value: "m:" + m.id, text: `${m.hostname} — ${m.hardware}` }] : [])),
    ...catalog.map((e) => ({ value: "c:" + e.id, text: `catalog: ${e.name}` })),
  ];
  const picker = h("select", { multiple: true, size: 8, id: "compare-pick", name: "hw" },
    options.map((o) => h("option", { value: o.value, text: o.text, selected: chosen.includes(o.value) })));
  const form = h("form", { class: "card", id: "compare-form" },
    h("p", { class: "muted", text: "Pick 2 to 4 machines or catalog parts (Ctrl/Cmd-click), a workload and a task." }),
    picker,
    h("div", { class: "row" },
      h("label", {}, "workload", h("select", { name: "workload" }, ZOO.map((w) => h("option", { value: w, text: w, selected: w === workload })))),
      h("label", {}, "task", h("select", { name: "task" }, ["infer", "train"].map((t) => h("option", { value: t, text: t, selected: t === task })))),
      h("button", { type: "submit" }, "Compare")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const picked = [...picker.selectedOptions].map((o) => o.value).slice(0, 4);
    const data = new FormData(form);
    location.hash = "#/compare?" + new URLSearchParams({ hw: picked.join(","), workload: data.get("workload"), task: data.get("task") });
  });
  const out = h("div", { id: "compare-result" });
  main.replaceChildren(h("h1", { text: "Compare" }), form, out);
  if (chosen.length < 2) return;
  const answer = await api("POST", "/recommendations", { workload, task, scope: "catalog", limit: 1000 });
  const matches = (c, key) => (key.startsWith("m:") ? c.hardware.machine_id === key.slice(2) : !c.hardware.owned && c.hardware.catalog_id === key.slice(2));
  const names = chosen.map((key) => options.find((o) => o.value === key)?.text || key);
  const configs = new Map();
  for (const c of [...answer.candidates, ...answer.rejected]) {
    const col = chosen.findIndex((key) => matches(c, key));
    if (col < 0) continue;
    const k = `${c.runtime} ${c.precision} batch ${c.batch_size}${c.threads ? " threads " + c.threads : ""}`;
    if (!configs.has(k)) configs.set(k, new Array(chosen.length).fill(null));
    configs.get(k)[col] = c.estimate;
  }
  const keys = [...configs.keys()].filter((k) => configs.get(k).filter(Boolean).length >= 1).sort();
  const rows = keys.map((k) => h("tr", {}, td(k), configs.get(k).map((e) => td(e ? h("span", {}, estimateCell(e), " ", badge(e.kind), h("span", { class: "muted small", text: " " + e.source })) : "–", true))));
  const { box, canvas } = chartBox(`${workload}/${task}: samples/s per device (solid: measured; pale: interpolated or predicted)`, true);
  box.id = "chart-compare";
  out.replaceChildren(box, h("div", { class: "card" }, table(["config", ...names.map((n) => ({ label: n, num: 1 }))], rows)));
  const shown = keys.filter((k) => configs.get(k).filter(Boolean).length >= 2).slice(0, 20);
  const top = shown.length ? shown : keys.slice(0, 20);
  chart(canvas, {
    type: "bar",
    data: { labels: top, datasets: chosen.map((key, i) => ({
      label: names[i],
      data: top.map((k) => configs.get(k)[i]?.throughput_samples_per_s ?? null),
      backgroundColor: top.map((k) => COLORS[i % COLORS.length] + (configs.get(k)[i]?.kind === "measured" ? "" : "55")),
      borderColor: COLORS[i % COLORS.length], borderWidth: 1,
    })) },
    options: { maintainAspectRatio: false, scales: { y: { type: "logarithmic" } } },
  });
}

// ------------------------------------------------------------------ jobs

async function jobsPage(main, params) {
  const offset = Number(params.get("offset") || 0);
  const page = await api("GET", "/jobs" + query({ limit: 50, offset }));
  const machines = (await api("GET", "/machines" + query({ limit: 200 }))).items;
  const form = h("form", { class: "card", id: "job-form" },
    h("h2", { text: "Schedule a suite" }),
    h("div", { class: "row" },
      h("label", {}, "suite", h("select", { name: "suite" }, ["quick", "standard", "full"].map((s) => h("option", { value: s, text: s })))),
      h("label", {}, "on machine", h("select", { name: "machine_id" }, h("option", { value: "", text: "— or a label selector —" }),
        machines.map((m) => h("option", { value: m.id, text: `${m.hostname} (${m.status})` })))),
      h("label", {}, "selector", h("input", { name: "selector", placeholder: "gpu=h100-sxm5-80gb, rack=b2" })),
      h("label", {}, "attempts", h("input", { name: "max_attempts", type: "number", min: "1", max: "20", value: "3" })),
      h("button", { type: "submit", disabled: !isAdmin() }, "Schedule")),
    h("p", { class: "error", id: "job-error" }));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const selector = Object.fromEntries(String(data.get("selector") || "").split(",").map((s) => s.trim()).filter(Boolean).map((s) => s.split("=").map((x) => x.trim())));
    const body = { suite: data.get("suite"), max_attempts: Number(data.get("max_attempts") || 3), selector };
    if (data.get("machine_id")) body.machine_id = data.get("machine_id");
    try { await api("POST", "/jobs", body); route(); } catch (e) { document.getElementById("job-error").textContent = e.message; }
  });
  const names = new Map(machines.map((m) => [m.id, m.hostname]));
  const rows = page.items.map((j) => {
    const share = j.configs_total ? Math.round((100 * j.configs_done) / j.configs_total) : 0;
    return h("tr", { "data-job": j.id },
      td(h("span", { class: "small", text: j.id.slice(0, 8) })), td(j.suite), td(badge(j.status)),
      td(j.machine_id ? names.get(j.machine_id) || j.machine_id.slice(0, 8) : Object.entries(j.selector).map(([k, v]) => `${k}=${v}`).join(", ")),
      td(j.claimed_by ? names.get(j.claimed_by) || j.claimed_by.slice(0, 8) : "–"),
      td(h("span", {}, h("span", { class: "progress" }, h("span", { style: null, "data-share": share })), ` ${j.configs_done}/${j.configs_total ?? "?"}`)),
      td(`${j.attempts}/${j.max_attempts}`), td(h("span", { class: "small", text: j.message || "" })),
      td(["queued", "running"].includes(j.status) && isAdmin()
        ? h("button", { class: "secondary", onclick: async () => { await api("POST", `/jobs/${j.id}/cancel`); route(); } }, "Cancel") : null));
  });
  main.replaceChildren(h("h1", { text: "Jobs" }), form,
    h("div", { class: "card", id: "jobs" }, table(["job", "suite", "status", "target", "agent", "progress", "attempts", "message", ""], rows),
      pager(page, (o) => { location.hash = "#/jobs?offset=" + o; })));
  // widths through the CSSOM: the Content-Security-Policy forbids inline style attributes
  for (const bar of main.querySelectorAll("[data-share]")) bar.style.width = bar.dataset.share + "%";
  if (page.items.some((j) => ["queued", "running"].includes(j.status))) state.timer = setTimeout(route, 3000);
}

// ------------------------------------------------------------------ catalog

async function catalogPage(main) {
  const entries = await api("GET", "/catalog");
  const rows = entries.map((e) => {
    const price = h("input", { type: "number", min: "0", step: "any", value: e.price_usd ?? "", disabled: !isAdmin(), name: "price-" + e.id, class: "price" });
    const tdp = h("input", { type: "number", min: "1", step: "any", value: e.tdp_w ?? "", disabled: !isAdmin(), name: "tdp-" + e.id, class: "tdp" });
    const saved = h("span", { class: "muted small" });
    const save = h("button", { class: "secondary", disabled: !isAdmin(), onclick: async () => {
      const patch = {};
      if (price.value !== "") patch.price_usd = Number(price.value);
      if (tdp.value !== "") patch.tdp_w = Number(tdp.value);
      try { await api("PUT", "/catalog/" + e.id, patch); saved.textContent = "saved"; } catch (err) { saved.textContent = err.message; }
    } }, "Save");
    const sourced = (field, text) => h("span", { title: e.sources[field] || "no source", text });
    return h("tr", { "data-entry": e.id },
      td(h("span", {}, e.name, h("div", { class: "muted small", text: e.id }))), td(e.kind),
      td(sourced("peak_fp32_tflops", fmt(e.peak_fp32_tflops)), true), td(sourced("peak_tf32_tflops", fmt(e.peak_tf32_tflops)), true),
      td(sourced("peak_bf16_tflops", fmt(e.peak_bf16_tflops)), true), td(sourced("peak_fp16_tflops", fmt(e.peak_fp16_tflops)), true),
      td(sourced("peak_int8_tops", fmt(e.peak_int8_tops)), true), td(sourced("memory_gb", fmt(e.memory_gb, 0)), true),
      td(sourced("memory_bandwidth_gb_s", fmt(e.memory_bandwidth_gb_s, 0)), true),
      td(tdp), td(e.power_limit_min_w ? `${fmt(e.power_limit_min_w, 0)}–${fmt(e.power_limit_max_w, 0)}` : "–"),
      td(price), td(h("span", {}, save, " ", saved)));
  });
  main.replaceChildren(h("h1", { text: "Catalog" }),
    h("p", { class: "muted", text: "Peaks in TFLOP/s (int8: TOP/s), dense; hover a figure for its source. Prices and TDPs you save override the shipped figures for every recommendation." }),
    h("div", { class: "card" }, table(["hardware", "kind", { label: "fp32", num: 1 }, { label: "tf32", num: 1 }, { label: "bf16", num: 1 },
      { label: "fp16", num: 1 }, { label: "int8", num: 1 }, { label: "GB", num: 1 }, { label: "GB/s", num: 1 }, "TDP W", "power limits W", "price $", ""], rows)));
}

// ------------------------------------------------------------------ router

const PAGES = {
  fleet: (main, rest, params) => fleetPage(main, params),
  machine: (main, rest, params) => machinePage(main, rest[0], params),
  compare: (main, rest, params) => comparePage(main, params),
  recommend: (main, rest, params) => recommendPage(main, params),
  jobs: (main, rest, params) => jobsPage(main, params),
  catalog: (main) => catalogPage(main),
};

async function route() {
  clearTimeout(state.timer);
  for (const instance of state.charts.splice(0)) instance.destroy();
  const main = document.getElementById("main");
  const [path, search] = (location.hash.replace(/^#\/?/, "") || "fleet").split("?");
  const [name, ...rest] = path.split("/");
  const page = PAGES[name] || PAGES.fleet;
  for (const link of document.querySelectorAll("#nav a")) link.classList.toggle("active", link.dataset.page === name);
  if (!state.kind) await whoAmI();
  if (!state.kind) { showLogin(); return; }
  document.body.dataset.page = name;
  document.body.dataset.ready = "";
  try {
    await page(main, rest, new URLSearchParams(search || ""));
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 401)) failure(main, e);
  }
  document.body.dataset.readyMs = String(Math.round(performance.now())); // since navigation start
  document.body.dataset.ready = name;
}

window.addEventListener("hashchange", route);
window.addEventListener("DOMContentLoaded", () => {
  // no animation: a chart shows its numbers at once (and a screenshot never catches bars half grown)
  window.Chart.defaults.animation = false;
  route(); // it asks who is logged in
});
