// The catalog: many hundreds of parts, filtered and paged on the server (one page drawn at a time),
// each figure with its source and each price with how it is known; an admin overrides prices and TDPs.

import { api, query } from "../api.js";
import { fmt, h, options, pager, table, td } from "../dom.js";

export const page = { name: "catalog", title: "Catalog", order: 50 };

const SIZES = [25, 50, 100, 200];
const FILTERS = ["q", "vendor", "kind", "min_year", "max_year", "min_memory_gb"];

export async function render(main, { params, admin }) {
  const filters = Object.fromEntries(FILTERS.map((name) => [name, params.get(name) || ""]));
  let limit = SIZES.includes(Number(params.get("limit"))) ? Number(params.get("limit")) : 50;
  let offset = Math.max(0, Number(params.get("offset")) || 0);
  const count = h("p", { class: "muted", id: "catalog-count" });
  const body = h("div", { id: "catalog-table" });
  const vendor = h("select", { name: "vendor" }, h("option", { value: "", text: "any vendor" }));
  let latest = 0; // a slower answer to an earlier filter or page never draws over a newer one

  const load = async (at) => {
    const asked = ++latest;
    offset = at;
    let found;
    try {
      found = await api("GET", "/catalog" + query({ ...filters, limit, offset }));
    } catch (e) {
      if (asked === latest) { count.replaceChildren(h("span", { class: "error", text: e.message })); body.replaceChildren(); }
      return;
    }
    if (asked !== latest) return;
    if (vendor.options.length === 1) { // the vendors' names come with the first page
      const named = found.vendors.find((v) => v.toLowerCase() === filters.vendor.toLowerCase());
      vendor.append(...options(filters.vendor && !named ? [...found.vendors, filters.vendor] : found.vendors, named || filters.vendor));
    }
    remember(main, filters, limit, offset);
    count.textContent = `${found.items.length} of ${found.total} shown`;
    body.replaceChildren(
      table(["hardware", "kind", "vendor", { label: "year", num: 1 }, { label: "fp32", num: 1 }, { label: "tf32", num: 1 },
        { label: "bf16", num: 1 }, { label: "fp16", num: 1 }, { label: "int8", num: 1 }, { label: "GB", num: 1 },
        { label: "GB/s", num: 1 }, "TDP W", "power limits W", "price $", ""], found.items.map((e) => row(e, admin))),
      pager(found, load));
  };

  // The inputs are made once, so what someone types is never replaced by a reload.
  // the search answers as one types; a number waits for Enter or leaving the box (half a year is no year)
  const field = (name, attrs, on = "change") => {
    const input = h("input", { name, value: filters[name], ...attrs });
    input.addEventListener(on, () => { filters[name] = input.value.trim(); load(0); });
    return input;
  };
  const kind = h("select", { name: "kind" }, h("option", { value: "", text: "GPUs and CPUs" }),
    options(["gpu", "cpu"], filters.kind, (k) => k.toUpperCase() + "s"));
  const size = h("select", { name: "limit" }, options(SIZES.map(String), String(limit), (n) => `${n} per page`));
  for (const [select, apply] of [[vendor, () => { filters.vendor = vendor.value; }], [kind, () => { filters.kind = kind.value; }],
    [size, () => { limit = Number(size.value); }]]) {
    select.addEventListener("change", () => { apply(); load(0); });
  }
  const toolbar = h("div", { class: "toolbar", id: "catalog-filters" },
    field("q", { type: "search", placeholder: "name or id contains…" }, "input"), vendor, kind,
    field("min_year", { type: "number", min: "1970", max: "2100", placeholder: "from year", class: "year" }),
    field("max_year", { type: "number", min: "1970", max: "2100", placeholder: "to year", class: "year" }),
    field("min_memory_gb", { type: "number", min: "0", step: "any", placeholder: "min memory GB", class: "memory" }),
    size);
  main.replaceChildren(h("h1", { text: "Catalog" }),
    h("p", { class: "muted", text: "Peaks in TFLOP/s (int8: TOP/s), dense; hover a figure for its source. Every price says how it is known: a dated quote, the lab's own price, or a release price. Prices and TDPs you save override the shipped figures for every recommendation." }),
    h("div", { class: "card" }, toolbar, count, body));
  await load(offset);
}

/** The filters and the page in the address, so a reload or a shared link shows the same page; not
 * once someone has gone to another page (a late answer must not take the address back). */
function remember(main, filters, limit, offset) {
  if (!main.isConnected) return;
  const kept = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...filters, limit: limit === 50 ? "" : limit, offset: offset || "" })) if (v) kept.set(k, v);
  const hash = "#/catalog" + (kept.toString() ? "?" + kept : "");
  if (location.hash !== hash) {
    history.replaceState(null, "", hash); // no hashchange: the page is not drawn again
    main.dataset.hash = hash; // the shell redraws this view in place on a refresh of the new address
  }
}

/** "quoted 2024-06" under the figure, or "no price" where the catalog has none. */
const priceNote = (e) => (e.price ? e.price.label : "no price");

function row(e, admin) {
  const price = h("input", { type: "number", min: "0", step: "any", value: e.price_usd ?? "", disabled: !admin, name: "price-" + e.id, class: "price" });
  const tdp = h("input", { type: "number", min: "1", step: "any", value: e.tdp_w ?? "", disabled: !admin, name: "tdp-" + e.id, class: "tdp" });
  const known = h("div", { class: "muted small price-note", title: e.price?.source || "", text: priceNote(e) });
  const saved = h("span", { class: "muted small" });
  const save = h("button", { class: "secondary", disabled: !admin, onclick: async () => {
    const patch = {};
    if (price.value !== "") patch.price_usd = Number(price.value);
    if (tdp.value !== "") patch.tdp_w = Number(tdp.value);
    try {
      const entry = await api("PUT", "/catalog/" + e.id, patch);
      known.textContent = priceNote(entry);
      saved.textContent = "saved";
    } catch (err) { saved.textContent = err.message; }
  } }, "Save");
  const sourced = (field, text) => h("span", { title: e.sources[field] || "no source", text });
  return h("tr", { "data-entry": e.id },
    td(h("span", {}, e.name, h("div", { class: "muted small", text: e.id }))), td(e.kind), td(e.vendor), td(e.release_year ?? "–", true),
    td(sourced("peak_fp32_tflops", fmt(e.peak_fp32_tflops)), true), td(sourced("peak_tf32_tflops", fmt(e.peak_tf32_tflops)), true),
    td(sourced("peak_bf16_tflops", fmt(e.peak_bf16_tflops)), true), td(sourced("peak_fp16_tflops", fmt(e.peak_fp16_tflops)), true),
    td(sourced("peak_int8_tops", fmt(e.peak_int8_tops)), true), td(sourced("memory_gb", fmt(e.memory_gb, 0)), true),
    td(sourced("memory_bandwidth_gb_s", fmt(e.memory_bandwidth_gb_s, 0)), true),
    td(tdp), td(e.power_limit_min_w ? `${fmt(e.power_limit_min_w, 0)}–${fmt(e.power_limit_max_w, 0)}` : "–"),
    td(h("span", {}, price, known)), td(h("span", {}, save, " ", saved)));
}
