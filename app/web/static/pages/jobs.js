// Jobs: schedule a suite on a machine or a label selector, follow the queue, cancel.

import { api, query } from "../api.js";
import { badge, h, options, pager, pairs, table, td } from "../dom.js";

export const page = { name: "jobs", title: "Jobs", order: 40 };

export async function render(main, { params, admin, registry, refresh, refreshIn }) {
  const offset = Number(params.get("offset") || 0);
  const jobs = await api("GET", "/jobs" + query({ limit: 50, offset }));
  const machines = (await api("GET", "/machines" + query({ limit: 200 }))).items;
  const form = h("form", { class: "card", id: "job-form" },
    h("h2", { text: "Schedule a suite" }),
    h("div", { class: "row" },
      h("label", {}, "suite", h("select", { name: "suite" }, options(registry.vocabulary.suites))),
      h("label", {}, "on machine", h("select", { name: "machine_id" }, h("option", { value: "", text: "— or a label selector —" }),
        machines.map((m) => h("option", { value: m.id, text: `${m.hostname} (${m.status})` })))),
      h("label", {}, "selector", h("input", { name: "selector", placeholder: "gpu=h100-sxm5-80gb, rack=b2" })),
      h("label", {}, "attempts", h("input", { name: "max_attempts", type: "number", min: "1", max: "20", value: "3" })),
      h("button", { type: "submit", disabled: !admin }, "Schedule")),
    h("p", { class: "error", id: "job-error" }));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const selector = Object.fromEntries(String(data.get("selector") || "").split(",").map((s) => s.trim()).filter(Boolean).map((s) => s.split("=").map((x) => x.trim())));
    const body = { suite: data.get("suite"), max_attempts: Number(data.get("max_attempts") || 3), selector };
    if (data.get("machine_id")) body.machine_id = data.get("machine_id");
    try { await api("POST", "/jobs", body); refresh(); } catch (e) { document.getElementById("job-error").textContent = e.message; }
  });
  const names = new Map(machines.map((m) => [m.id, m.hostname]));
  const rows = jobs.items.map((j) => {
    const share = j.configs_total ? Math.round((100 * j.configs_done) / j.configs_total) : 0;
    return h("tr", { "data-job": j.id },
      td(h("span", { class: "small", text: j.id.slice(0, 8) })), td(j.suite), td(badge(j.status)),
      td(j.machine_id ? names.get(j.machine_id) || j.machine_id.slice(0, 8) : pairs(j.selector, ", ")),
      td(j.claimed_by ? names.get(j.claimed_by) || j.claimed_by.slice(0, 8) : "–"),
      td(h("span", {}, h("span", { class: "progress" }, h("span", { "data-share": share })), ` ${j.configs_done}/${j.configs_total ?? "?"}`)),
      td(`${j.attempts}/${j.max_attempts}`), td(h("span", { class: "small", text: j.message || "" })),
      td(["queued", "running"].includes(j.status) && admin
        ? h("button", { class: "secondary", onclick: async () => { await api("POST", `/jobs/${j.id}/cancel`); refresh(); } }, "Cancel") : null));
  });
  main.replaceChildren(h("h1", { text: "Jobs" }), form,
    h("div", { class: "card", id: "jobs" }, table(["job", "suite", "status", "target", "agent", "progress", "attempts", "message", ""], rows),
      pager(jobs, (o) => { location.hash = "#/jobs?offset=" + o; })));
  // widths through the CSSOM: the Content-Security-Policy forbids inline style attributes
  for (const bar of main.querySelectorAll("[data-share]")) bar.style.width = bar.dataset.share + "%";
  if (jobs.items.some((j) => ["queued", "running"].includes(j.status))) refreshIn(3000);
}
