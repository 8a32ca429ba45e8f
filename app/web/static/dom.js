// Element helpers. Everything a machine or a user reports reaches the page as text (textContent or a
// text node), never as markup: there is no innerHTML anywhere in the dashboard.

export function h(tag, attrs, ...children) {
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

// one formatter per precision: Number.toLocaleString with options builds a new one per call (slow in tables)
const formats = new Map();
export function fmt(value, digits = 1) {
  if (value === null || value === undefined) return "–";
  if (!formats.has(digits)) formats.set(digits, new Intl.NumberFormat("en-US", { maximumFractionDigits: digits }));
  return formats.get(digits).format(Number(value));
}

export const badge = (text, cls) => h("span", { class: "badge " + (cls || text), text });

/** A "reference" badge for a figure from a reference run hwadvisor ships (source reference:hwadvisor-...), else null. */
export const referenceBadge = (source) =>
  (source || "").startsWith("reference:")
    ? h("span", { class: "badge reference", title: "measured by hwadvisor's own reference run, not by this lab", text: "reference" })
    : null;

/** "k=v" pairs of a label map, joined. */
export const pairs = (labels, separator) => Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(separator);

export function ago(iso) {
  if (!iso) return "never";
  const seconds = (Date.now() - Date.parse(iso)) / 1000;
  if (seconds < 90) return Math.max(0, Math.round(seconds)) + " s ago";
  if (seconds < 5400) return Math.round(seconds / 60) + " min ago";
  if (seconds < 129600) return Math.round(seconds / 3600) + " h ago";
  return Math.round(seconds / 86400) + " days ago";
}

/** A table; a header is a string or {label, num} (num: right-aligned figures). */
export function table(headers, rows) {
  return h("table", {},
    h("thead", {}, h("tr", {}, headers.map((c) => h("th", { class: c.num ? "num" : null, text: c.label || c })))),
    h("tbody", {}, rows));
}

export function td(content, num) {
  return h("td", { class: num ? "num" : null }, content);
}

export function failure(where, error) {
  where.replaceChildren(h("p", { class: "error", text: error.message }));
}

/** Prev/next over a server page ({offset, limit, total}); onMove gets the new offset. */
export function pager(page, onMove) {
  const first = page.offset + 1, last = Math.min(page.offset + page.limit, page.total);
  return h("div", { class: "pager" },
    h("button", { class: "secondary", disabled: page.offset === 0, onclick: () => onMove(Math.max(0, page.offset - page.limit)) }, "‹ prev"),
    h("span", { class: "muted", text: page.total ? `${first}–${last} of ${page.total}` : "none" }),
    h("button", { class: "secondary", disabled: last >= page.total, onclick: () => onMove(page.offset + page.limit) }, "next ›"));
}

/** An estimate's throughput with its error band. */
export function estimateCell(e) {
  return h("span", {}, fmt(e.throughput_samples_per_s), h("span", { class: "muted small", text: ` ±${fmt(e.error_pct, 0)}%` }));
}

/** A result's workload as "workload/task" when results carry a task, the workload alone otherwise. */
export const workloadOf = (r) => (r.task ? `${r.workload}/${r.task}` : r.workload);

/** <option>s for a select, one selected. */
export const options = (values, selected, text = (v) => v) =>
  values.map((v) => h("option", { value: v, text: text(v), selected: v === selected }));
