// Runtimes: one workload on one machine, every runtime x precision x variant side by side at one batch
// (DLBench's view): throughput, latency and memory, each against the original model in fp32 eager
// PyTorch on the same machine; what a runtime could not run says why. Variants are speed only.

import { api, everyItem, query } from "../api.js";
import { chart, chartBox, COLORS } from "../charts.js";
import { workloadFields, workloads } from "../choices.js";
import { badge, fmt, h, options, table, td } from "../dom.js";

export const page = { name: "runtimes", title: "Runtimes", order: 25 };

const BASELINE = { runtime: "torch-eager", precision: "fp32", variant: null };
const CAVEAT = "speed only; check accuracy on your data";

export async function render(main, { params, registry }) {
  const machines = (await api("GET", "/machines" + query({ limit: 200 }))).items;
  const machine = params.get("machine") || machines[0]?.id || "";
  const workload = params.get("workload") || "resnet50";
  const task = params.get("task") || "infer";
  const form = h("form", { class: "card", id: "runtimes-form" },
    h("p", { class: "muted", text: "One workload on one machine: every runtime, precision and variant it measured, at one batch." }),
    h("div", { class: "row" },
      h("label", {}, "machine", h("select", { name: "machine" }, machines.map((m) => h("option", { value: m.id, text: m.hostname, selected: m.id === machine })))),
      workloadFields(await workloads(registry), workload, task),
      h("button", { type: "submit" }, "Show")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    location.hash = "#/runtimes?" + new URLSearchParams({ machine: data.get("machine"), workload: data.get("workload"), task: data.get("task") });
  });
  const out = h("div", { id: "runtimes-result" });
  main.replaceChildren(h("h1", { text: "Runtimes, precisions and variants" }), form, out);
  if (!machine) { out.replaceChildren(h("p", { class: "muted", text: "No machine has reported yet." })); return; }
  const results = await everyItem("/results", { machine_id: machine, workload, task });
  if (!results.length) { out.replaceChildren(h("p", { class: "muted", text: `Nothing measured ${workload}/${task} on this machine.` })); return; }
  const batches = [...new Set(results.map((r) => r.batch_size))].sort((a, b) => a - b);
  const counts = (b) => results.filter((r) => r.batch_size === b && r.status === "ok").length;
  const batch = Number(params.get("batch")) || batches.reduce((best, b) => (counts(b) > counts(best) ? b : best), batches[0]);
  const picker = h("select", { id: "runtimes-batch" }, options(batches.map(String), String(batch), (b) => `batch ${b}`));
  picker.addEventListener("change", () => {
    location.hash = "#/runtimes?" + new URLSearchParams({ machine, workload, task, batch: picker.value });
  });
  // the latest result of each runtime x precision x variant at this batch (results come oldest first)
  const latest = new Map();
  for (const r of results) if (r.batch_size === batch) latest.set(`${r.runtime} ${r.precision} ${r.variant ?? ""} ${r.threads ?? ""}`, r);
  const rows = [...latest.values()].sort((a, b) => (b.throughput_samples_per_s ?? -1) - (a.throughput_samples_per_s ?? -1));
  const base = rows.find((r) => r.status === "ok" && r.runtime === BASELINE.runtime && r.precision === BASELINE.precision && !r.variant);
  const ratio = (r) => (base && r.status === "ok" ? r.throughput_samples_per_s / base.throughput_samples_per_s : null);
  const variantCell = (r) => (r.variant ? h("span", { title: CAVEAT }, r.variant, h("div", { class: "muted small", text: CAVEAT })) : h("span", { class: "muted", text: "original" }));
  const body = rows.map((r) => h("tr", { class: r.status === "ok" ? "config" : "config muted", "data-config": `${r.runtime} ${r.precision} ${r.variant ?? "none"}` },
    td(r.runtime), td(r.precision), td(variantCell(r)), td(r.threads ?? "–", true),
    r.status === "ok"
      ? [td(fmt(r.throughput_samples_per_s, 2), true), td(fmt(r.latency_p50_ms, 2), true), td(ratio(r) === null ? "–" : fmt(ratio(r), 2) + "x", true),
        td(fmt(r.peak_memory_mb, 0), true), td(fmt(r.compile_time_s, 1), true), td("")]
      : [td("–", true), td("–", true), td("–", true), td("–", true), td("–", true), td(h("span", {}, badge(r.status), " ", r.reason))]));
  const { box, canvas } = chartBox(`${workload}/${task} at batch ${batch}: samples/s (grey: the original model; colour: a variant)`, true);
  box.id = "chart-runtimes";
  out.replaceChildren(
    h("div", { class: "row" }, picker,
      h("span", { class: "muted small", text: base ? `x: against the original ${workload} in fp32 torch-eager here (${fmt(base.throughput_samples_per_s, 2)}/s)` : "no fp32 torch-eager result of the original at this batch to compare with" })),
    box,
    h("div", { class: "card" }, table(["runtime", "precision", "variant", { label: "threads", num: 1 }, { label: "samples/s", num: 1 }, { label: "p50 ms", num: 1 },
      { label: "x fp32 eager", num: 1 }, { label: "peak MB", num: 1 }, { label: "compile s", num: 1 }, "why not"], body)));
  const ok = rows.filter((r) => r.status === "ok");
  const variants = [...new Set(ok.map((r) => r.variant).filter(Boolean))].sort();
  chart(canvas, {
    type: "bar",
    data: { labels: ok.map((r) => `${r.runtime} ${r.precision}${r.variant ? " " + r.variant : ""}`),
      datasets: [{ label: "samples/s", data: ok.map((r) => r.throughput_samples_per_s),
        backgroundColor: ok.map((r) => (r.variant ? COLORS[(variants.indexOf(r.variant) + 1) % COLORS.length] : "#9ca3af")) }] },
    options: { maintainAspectRatio: false, indexAxis: "y", plugins: { legend: { display: false } }, scales: { x: { type: "logarithmic" } } },
  });
}
