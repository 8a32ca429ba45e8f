// Serving: a language model (a preset or a custom shape), prompt and output lengths, the load and the SLOs in;
// per part the devices (tensor parallel where one is not enough), TTFT, TPOT, tokens/s, tokens/J and $/Mtok out.

import { API, api, everyItem } from "../api.js";
import { badge, failure, fmt, h, options, table, td } from "../dom.js";

export const page = { name: "serving", title: "Serving", order: 37 };

// PlanObjective of app/contracts/plan.py and the precisions a language model is served in (contracts SERVING_PRECISIONS)
const OBJECTIVES = { cheapest: "cheapest ($ per million tokens)", fastest: "fastest (tokens/s)", least_energy: "least energy (tokens/J)" };
const PRECISIONS = ["bf16", "fp16", "fp32", "int8", "int4"];  // int8, int4: weight-only
const LOADS = { concurrency: "sequences in flight", request_rate_per_s: "requests/s" };
const DEFAULT = { workload: "llama3_8b", prompt_tokens: 1024, output_tokens: 256, concurrency: 16, objective: "cheapest" };

export async function render(main, { params, registry }) {
  let spec = DEFAULT;
  if (params.get("spec")) { try { spec = JSON.parse(params.get("spec")); } catch (e) { /* keep the default */ } }
  // the language models are the zoo's workloads with a decode task: no list of names here
  const models = registry.families.workload.filter((w) => w.tasks.includes("decode")).map((w) => w.name);
  const catalog = await everyItem("/catalog");
  const form = servingForm(spec, models, catalog);
  const out = h("div", { id: "serving-result" });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    location.hash = "#/serving?" + new URLSearchParams({ spec: JSON.stringify(specFromForm(form)) });
  });
  main.replaceChildren(h("h1", { text: "Serve a language model" }), form, out);
  if (params.get("spec")) await showPlan(out, spec);
}

function specFromForm(form) {
  const data = new FormData(form);
  const number = (name) => (data.get(name) === "" || data.get(name) === null ? null : Number(data.get(name)));
  const spec = { workload: data.get("workload"), prompt_tokens: number("prompt_tokens"), output_tokens: number("output_tokens"),
    objective: data.get("objective") };
  const load = number("load");
  if (load !== null) spec[data.get("load_kind")] = load;
  for (const name of ["ttft_slo_ms", "tpot_slo_ms", "power_budget_w", "max_price_usd"]) if (number(name) !== null) spec[name] = number(name);
  const precisions = data.getAll("precision");
  if (precisions.length) spec.precisions = precisions;
  const parts = String(data.get("hardware") || "").split(",").map((s) => s.trim()).filter(Boolean);
  if (parts.length) spec.hardware = parts;
  const costs = {};
  if (number("electricity_usd_per_kwh") !== null) costs.electricity_usd_per_kwh = number("electricity_usd_per_kwh");
  const part = String(data.get("cloud_part") || "").trim();
  if (part && number("cloud_usd_per_device_hour")) costs.cloud_usd_per_device_hour = { [part]: number("cloud_usd_per_device_hour") };
  if (Object.keys(costs).length) spec.costs = costs;
  if (number("max_devices") !== null) spec.cluster = { max_devices: number("max_devices") };
  return spec;
}

function servingForm(spec, models, catalog) {
  const field = (name, text, value, attrs) => h("label", {}, text, h("input", { name, type: "number", step: "any", min: "0", value: value ?? "", ...attrs }));
  const kind = spec.request_rate_per_s !== undefined ? "request_rate_per_s" : "concurrency";
  const [cloudPart, cloudRate] = Object.entries(spec.costs?.cloud_usd_per_device_hour || {})[0] || ["", null];
  return h("form", { class: "card", id: "serving-form" },
    h("div", { class: "row" },
      h("label", {}, "model", h("select", { name: "workload" }, options(models, spec.workload))),
      field("prompt_tokens", "prompt tokens", spec.prompt_tokens, { min: "1", step: "1" }),
      field("output_tokens", "output tokens", spec.output_tokens, { min: "1", step: "1" }),
      h("label", {}, "load", h("select", { name: "load_kind" }, options(Object.keys(LOADS), kind, (k) => LOADS[k]))),
      field("load", "", spec[kind], { placeholder: "1 sequence" }),
      h("label", {}, "objective", h("select", { name: "objective" }, options(Object.keys(OBJECTIVES), spec.objective, (o) => OBJECTIVES[o])))),
    h("div", { class: "row" },
      field("ttft_slo_ms", "TTFT SLO ms", spec.ttft_slo_ms, { placeholder: "none" }),
      field("tpot_slo_ms", "TPOT SLO ms", spec.tpot_slo_ms, { placeholder: "none" }),
      field("power_budget_w", "power budget W/device", spec.power_budget_w),
      field("max_price_usd", "max purchase $", spec.max_price_usd),
      field("max_devices", "max devices", spec.cluster?.max_devices, { placeholder: "64", min: "1", step: "1" }),
      field("electricity_usd_per_kwh", "$/kWh", spec.costs?.electricity_usd_per_kwh, { placeholder: "0.15" })),
    h("div", { class: "row" },
      h("label", {}, "only parts", h("input", { name: "hardware", list: "serving-catalog-ids", placeholder: "every GPU (comma-separated ids)",
        value: (spec.hardware || []).join(", ") })),
      h("label", {}, "cloud price for part", h("input", { name: "cloud_part", list: "serving-catalog-ids", value: cloudPart })),
      field("cloud_usd_per_device_hour", "$/device-hour", cloudRate),
      h("datalist", { id: "serving-catalog-ids" }, catalog.map((e) => h("option", { value: e.id, label: e.name })))),
    h("div", { class: "row" },
      h("span", { class: "muted", text: "precisions:" }),
      PRECISIONS.map((p) => h("label", {}, h("input", { type: "checkbox", name: "precision", value: p, checked: (spec.precisions || []).includes(p) }), p)),
      h("span", { class: "muted small", text: "(none ticked: each part's bf16, else fp16)" }),
      h("button", { type: "submit", id: "serving-submit" }, "Plan serving")));
}

const usd = (value, digits = 2) => (value === null || value === undefined ? "–" : "$" + fmt(value, digits));

async function showPlan(out, spec) {
  out.replaceChildren(h("p", { class: "muted", text: "Planning…" }));
  let plan;
  try { plan = await api("POST", "/plans/serving", spec); } catch (e) {
    failure(out, e);
    const fields = e.problem?.errors || [];
    if (fields.length) out.append(h("ul", { class: "small" }, fields.map((f) => h("li", { text: `${f.field}: ${f.message}` }))));
    return;
  }
  const s = plan.shape;
  const rows = plan.candidates.map((c) => h("tr", { class: "candidate", "data-rank": c.rank },
    td(c.rank, true), td(c.hardware.name), td(c.precision),
    td(`${c.tensor_parallel} × ${c.replicas} = ${c.devices}`, true), td(c.batch_per_replica, true),
    td(fmt(c.ttft_ms, 0), true), td(fmt(c.tpot_ms, 1), true),
    td(h("span", {}, fmt(c.output_tokens_per_s, 0), h("span", { class: "muted small", text: ` ±${fmt(c.error_pct, 0)}% ` }), badge(c.kind)), true),
    td(`${fmt(c.memory_needed_gb)} / ${fmt(c.memory_gb, 0)}`, true), td(fmt(c.output_tokens_per_j, 2), true),
    td(h("strong", { text: usd(c.usd_per_million_tokens) }), true), td(usd(c.cloud_usd_per_million_tokens), true)));
  const headers = [{ label: "#", num: 1 }, "hardware", "precision", { label: "tensor parallel × copies", num: 1 },
    { label: "batch", num: 1 }, { label: "TTFT ms", num: 1 }, { label: "TPOT ms", num: 1 }, { label: "tokens/s", num: 1 },
    { label: "memory GB need / has", num: 1 }, { label: "tokens/J", num: 1 }, { label: "$/M tokens", num: 1 }, { label: "cloud $/M", num: 1 }];
  const rejected = plan.rejected.slice(0, 100).map((r) => h("tr", {},
    td(r.hardware.name), td(r.precision), td(r.tensor_parallel, true), td(r.reasons.map((reason) => reason.text).join("; "))));
  const best = plan.candidates[0];
  const curl = `curl -s -X POST ${location.origin}${API}/plans/serving \\\n  -H "Authorization: Bearer $HWADVISOR_TOKEN" -H "Content-Type: application/json" \\\n  -d '${JSON.stringify(spec)}'`;
  out.replaceChildren(
    h("p", { class: "muted", id: "serving-shape",
      text: `${fmt(s.layers, 0)} layers, hidden ${fmt(s.hidden, 0)}, ${s.heads} heads (${s.kv_heads} kv), vocabulary ${fmt(s.vocabulary, 0)}` }),
    h("div", { class: plan.notes.length ? "card" : null, id: "serving-notes" }, plan.notes.map((n) => h("p", { class: "muted small", text: n }))),
    h("div", { class: "card", id: "serving-candidates" }, h("h2", { text: `Ranked (${plan.candidates.length})` }),
      plan.candidates.length
        ? [h("div", { class: "scroll" }, table(headers, rows)),
          h("ul", { class: "plan-notes", id: "serving-best" }, best.notes.map((n) => h("li", { text: `#1: ${n.text}` })))]
        : h("p", { class: "muted", text: "No part serves this within the SLOs and limits; see the rejected below." })),
    h("div", { class: "card", id: "serving-rejected" }, h("h2", { text: `Rejected (${plan.rejected.length})` }),
      h("details", { open: !plan.candidates.length }, h("summary", { text: "which and why" }),
        table(["hardware", "precision", { label: "devices per copy", num: 1 }, "why"], rejected))),
    h("div", { class: "card", id: "serving-assumptions" }, h("h2", { text: "Assumptions" }),
      h("ul", {}, plan.assumptions.map((a) => h("li", { text: a })))),
    h("div", { class: "card" }, h("h2", { text: "The same query through the REST API" }), h("pre", { id: "serving-rest", text: curl })));
}
