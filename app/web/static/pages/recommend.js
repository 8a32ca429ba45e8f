// Recommend: a workload, its constraints and an objective in; ranked hardware and configs out, with
// the rejected and why, a throughput-vs-power chart with its Pareto front, and the same query as curl.

import { API, api } from "../api.js";
import { chart, chartBox, COLORS, errorBars } from "../charts.js";
import { deviceKindFields, deviceKindsOf, names, workloadFields, workloads } from "../choices.js";
import { badge, estimateCell, failure, fmt, h, options, referenceBadge, table, td } from "../dom.js";

export const page = { name: "recommend", title: "Recommend", order: 30 };

const KINDS = ["measured", "interpolated", "predicted"]; // an estimate's kinds, best first: one chart series each

export async function render(main, { params, registry }) {
  let spec = { workload: "resnet50", task: "infer", objective: "throughput", scope: "catalog", constraints: {} };
  if (params.get("spec")) { try { spec = JSON.parse(params.get("spec")); } catch (e) { /* keep the default */ } }
  const form = recommendForm(spec, registry, await workloads(registry));
  const out = h("div", { id: "recommend-result" });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    location.hash = "#/recommend?" + new URLSearchParams({ spec: JSON.stringify(specFromForm(form)) });
  });
  main.replaceChildren(h("h1", { text: "Recommend" }), form, out);
  if (params.get("spec")) await showRecommendation(out, spec);
}

function specFromForm(form) {
  const data = new FormData(form);
  const number = (name) => (data.get(name) === "" || data.get(name) === null ? null : Number(data.get(name)));
  const precisions = data.getAll("precision");
  const runtimes = String(data.get("runtimes") || "").split(",").map((s) => s.trim()).filter(Boolean);
  const variants = data.getAll("variant");
  const constraints = {
    power_budget_w: number("power_budget_w"), system_power_budget_w: number("system_power_budget_w"),
    device_count: number("device_count") || 1, latency_p99_slo_ms: number("latency_p99_slo_ms"),
    min_throughput_samples_per_s: number("min_throughput_samples_per_s"), max_price_usd: number("max_price_usd"),
    precisions: precisions.length ? precisions : null, runtimes: runtimes.length ? runtimes : null,
    device_kinds: deviceKindsOf(data), variants: variants.length ? variants : null,
  };
  for (const k of Object.keys(constraints)) if (constraints[k] === null) delete constraints[k];
  const spec = { workload: data.get("workload"), task: data.get("task"), objective: data.get("objective"),
    scope: data.get("scope"), constraints, limit: 50 };
  if (number("batch_size")) spec.batch_size = number("batch_size");
  if (data.get("allow_variants")) spec.allow_variants = true;
  return spec;
}

function recommendForm(spec, registry, zoo) {
  const c = spec.constraints || {};
  const field = (name, text, value, attrs) => h("label", {}, text, h("input", { name, type: "number", step: "any", min: "0", value: value ?? "", ...attrs }));
  return h("form", { class: "card", id: "recommend-form" },
    h("div", { class: "row" },
      workloadFields(zoo, spec.workload, spec.task),
      h("label", {}, "objective", h("select", { name: "objective" }, options(names(registry, "objective"), spec.objective, (o) => o.replaceAll("_", " ")))),
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
      registry.vocabulary.precisions.map((p) => h("label", {}, h("input", { type: "checkbox", name: "precision", value: p, checked: (c.precisions || []).includes(p) }), p)),
      h("label", {}, "runtimes", h("input", { name: "runtimes", placeholder: "any (comma-separated)", value: (c.runtimes || []).join(", ") })),
      deviceKindFields(registry, c.device_kinds),
      h("label", {}, h("input", { type: "radio", name: "scope", value: "owned", checked: spec.scope !== "catalog" }), "machines we own"),
      h("label", {}, h("input", { type: "radio", name: "scope", value: "catalog", checked: spec.scope === "catalog" }), "also catalog hardware"),
      h("button", { type: "submit", id: "recommend-submit" }, "Recommend")),
    variantFields(spec, registry));
}

/** Allow or exclude model variants (pruned, int8-static, low-rank): off unless asked, and named when on. */
function variantFields(spec, registry) {
  const chosen = spec.constraints?.variants || [];
  const rows = registry.families.variant || [];
  return h("div", { class: "row", id: "variant-fields" },
    h("label", { title: "A variant is an optimised form of the model; its figures are speed only: check accuracy on your data" },
      h("input", { type: "checkbox", name: "allow_variants", value: "1", checked: Boolean(spec.allow_variants) }), "offer model variants (speed only)"),
    h("span", { class: "muted", text: "only:" }),
    rows.map((row) => h("label", { title: row.description },
      h("input", { type: "checkbox", name: "variant", value: row.name, checked: chosen.includes(row.name) }), row.name)));
}

/** The variant of a candidate with its caveat; the original model says so plainly. */
function variantCell(c) {
  if (!c.variant) return h("span", { class: "muted", text: "original" });
  return h("span", { class: "variant", title: c.caveat }, c.variant, h("div", { class: "muted small", text: c.caveat }));
}

/** The cost per million samples with how its price is known: a release price says so, no price says so. */
function costCell(c) {
  const known = c.price ? `$${fmt(c.price.usd, 0)}, ${c.price.label}` : "no price";
  return h("span", { class: "cost", title: c.price?.source || c.notes.map((n) => n.text).join("; ") },
    fmt(c.cost_per_million_samples_usd, 2),
    c.price && c.price.basis !== "release" ? null : h("div", { class: "muted small", text: known }));
}

/** Under the assured-throughput objective, the figure it ranks by: the low end of the estimate's band. */
const lowEnd = (spec, e) => (spec.objective === "assured_throughput"
  ? h("div", { class: "muted small low-end", text: `at least ${fmt(e.throughput_low)}` }) : null);

async function showRecommendation(out, spec) {
  out.replaceChildren(h("p", { class: "muted", text: "Asking the recommender…" }));
  let answer;
  try { answer = await api("POST", "/recommendations", spec); } catch (e) { failure(out, e); return; }
  const where = (c) => (c.hardware.owned ? `${c.hardware.machine_name} ${c.hardware.device}` : "catalog");
  const rows = answer.candidates.map((c) => h("tr", { class: "candidate" },
    td(c.rank, true), td(h("span", {}, c.hardware.name, h("div", { class: "explain", text: c.estimate.explanation }))), td(where(c)),
    td(c.runtime), td(c.precision), td(variantCell(c)), td(c.batch_size, true), td(c.threads ?? "–", true),
    td(h("span", {}, estimateCell(c.estimate), lowEnd(spec, c.estimate)), true), td(fmt(c.estimate.latency_p99_ms, 2), true),
    td(h("span", {}, fmt(c.estimate.power_w, 0), h("span", { class: "muted small", text: c.estimate.power_basis && c.estimate.power_basis !== "measured" ? " " + c.estimate.power_basis : "" })), true),
    td(fmt(c.throughput_per_w, 2), true), td(costCell(c), true),
    td(h("span", {}, badge(c.estimate.kind), " ", referenceBadge(c.estimate.source), " ", c.pareto ? badge("pareto") : null)), td(h("span", { class: "small", text: c.estimate.source }))));
  const rejected = answer.rejected.slice(0, 100).map((r) => h("tr", {},
    td(r.hardware.name), td(r.hardware.owned ? r.hardware.machine_name : "catalog"), td(`${r.runtime} ${r.precision}${r.variant ? " " + r.variant : ""} b${r.batch_size}`),
    td(badge(r.estimate.kind)), td(r.reasons.map((reason) => reason.text).join("; "))));
  const { box, canvas } = chartBox("Throughput vs power per device (error bars: the estimate's band; line: Pareto front)", true);
  box.id = "chart-pareto";
  const body = JSON.stringify(spec);
  const curl = `curl -s -X POST ${location.origin}${API}/recommendations \\\n  -H "Authorization: Bearer $HWADVISOR_TOKEN" -H "Content-Type: application/json" \\\n  -d '${body}'`;
  out.replaceChildren(
    h("div", { class: answer.notes.length ? "card" : null, id: "notes" }, answer.notes.map((n) => h("p", { class: "muted small", text: n }))),
    box,
    h("div", { class: "card" }, h("h2", { text: `Ranked (${answer.candidates.length})` }),
      answer.candidates.length ? table([{ label: "#", num: 1 }, "hardware", "where", "runtime", "precision", "variant", { label: "batch", num: 1 }, { label: "threads", num: 1 },
        { label: "samples/s", num: 1 }, { label: "p99 ms", num: 1 }, { label: "W", num: 1 }, { label: "per W", num: 1 }, { label: "$ / M", num: 1 }, "estimate", "source"], rows)
        : h("p", { class: "muted", text: "No candidate meets the constraints; see the rejected below." })),
    h("div", { class: "card", id: "rejected" }, h("h2", { text: `Rejected (${answer.rejected.length})` }),
      table(["hardware", "where", "config", "estimate", "why"], rejected)),
    h("div", { class: "card" }, h("h2", { text: "The same query through the REST API" }), h("pre", { id: "rest-query", text: curl })));
  drawPareto(canvas, answer.candidates);
}

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
