// Compare: 2 to 4 machines or catalog parts side by side for one workload, config by config,
// measured and estimated figures told apart.

import { api, everyItem, query } from "../api.js";
import { chart, chartBox, COLORS } from "../charts.js";
import { workloadFields, workloads } from "../choices.js";
import { badge, estimateCell, h, referenceBadge, table, td } from "../dom.js";

export const page = { name: "compare", title: "Compare", order: 20 };

export async function render(main, { params, registry }) {
  const chosen = (params.get("hw") || "").split(",").filter(Boolean);
  const workload = params.get("workload") || "resnet50";
  const task = params.get("task") || "infer";
  const machines = (await api("GET", "/machines" + query({ limit: 200 }))).items;
  const catalog = await everyItem("/catalog");
  const zoo = await workloads(registry);
  const choices = [
    ...machines.flatMap((m) => (m.hardware ? [{ value: "m:" + m.id, text: `${m.hostname} — ${m.hardware}` }] : [])),
    ...catalog.map((e) => ({ value: "c:" + e.id, text: `catalog: ${e.name}` })),
  ];
  const picker = h("select", { multiple: true, size: 8, id: "compare-pick", name: "hw" },
    choices.map((o) => h("option", { value: o.value, text: o.text, selected: chosen.includes(o.value) })));
  const form = h("form", { class: "card", id: "compare-form" },
    h("p", { class: "muted", text: "Pick 2 to 4 machines or catalog parts (Ctrl/Cmd-click), a workload and a task." }),
    picker,
    h("div", { class: "row" }, workloadFields(zoo, workload, task), h("button", { type: "submit" }, "Compare")));
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
  const names = chosen.map((key) => choices.find((o) => o.value === key)?.text || key);
  const configs = new Map();
  for (const c of [...answer.candidates, ...answer.rejected]) {
    const col = chosen.findIndex((key) => matches(c, key));
    if (col < 0) continue;
    const k = `${c.runtime} ${c.precision} batch ${c.batch_size}${c.threads ? " threads " + c.threads : ""}`;
    if (!configs.has(k)) configs.set(k, new Array(chosen.length).fill(null));
    configs.get(k)[col] = c.estimate;
  }
  const keys = [...configs.keys()].filter((k) => configs.get(k).filter(Boolean).length >= 1).sort();
  const rows = keys.map((k) => h("tr", {}, td(k), configs.get(k).map((e) => td(e ? h("span", {}, estimateCell(e), " ", badge(e.kind), " ", referenceBadge(e.source), h("span", { class: "muted small", text: " " + e.source })) : "–", true))));
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
