// The catalog: every part's peaks with their sources; an admin overrides prices and TDPs here.

import { api } from "../api.js";
import { fmt, h, table, td } from "../dom.js";

export const page = { name: "catalog", title: "Catalog", order: 50 };

export async function render(main, { admin }) {
  const entries = await api("GET", "/catalog");
  const rows = entries.map((e) => {
    const price = h("input", { type: "number", min: "0", step: "any", value: e.price_usd ?? "", disabled: !admin, name: "price-" + e.id, class: "price" });
    const tdp = h("input", { type: "number", min: "1", step: "any", value: e.tdp_w ?? "", disabled: !admin, name: "tdp-" + e.id, class: "tdp" });
    const saved = h("span", { class: "muted small" });
    const save = h("button", { class: "secondary", disabled: !admin, onclick: async () => {
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
