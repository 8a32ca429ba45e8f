// The fleet: every machine with its status and hardware, filters, approval, enrolment commands.

import { api, query } from "../api.js";
import { ago, badge, failure, h, pager, pairs, table, td } from "../dom.js";

export const page = { name: "fleet", title: "Fleet", order: 10 };

const STATUSES = ["pending", "online", "busy", "offline"]; // the filters shown; retired machines are left out

export async function render(main, { params, admin, refresh }) {
  const status = params.get("status") || "";
  const search = params.get("search") || "";
  const offset = Number(params.get("offset") || 0);
  const go = (changes) => {
    const next = new URLSearchParams({ status, search, offset: 0, ...changes });
    for (const [k, v] of [...next]) if (!v || v === "0") next.delete(k);
    location.hash = "#/fleet" + (next.toString() ? "?" + next : "");
  };
  const counts = await Promise.all(STATUSES.map((s) => api("GET", "/machines" + query({ status: s, limit: 1 }))));
  const machines = await api("GET", "/machines" + query({ status, search, limit: 50, offset }));
  const searchBox = h("input", { type: "search", placeholder: "hostname contains…", value: search, id: "fleet-search" });
  searchBox.addEventListener("change", () => go({ search: searchBox.value }));
  const filters = h("div", { class: "toolbar" },
    h("button", { class: status ? "secondary" : null, onclick: () => go({ status: "" }) }, "all"),
    STATUSES.map((s, i) => h("button", { class: status === s ? null : "secondary", onclick: () => go({ status: s }) }, `${s} (${counts[i].total})`)),
    searchBox);
  const rows = machines.items.map((m) => h("tr", { "data-machine": m.id },
    td(h("a", { href: "#/machine/" + m.id, text: m.hostname })),
    td(badge(m.status)),
    td(m.hardware || "–"),
    td(h("span", { class: "small muted", text: pairs(m.labels, "  ") })),
    td(ago(m.last_seen_at)),
    td(m.status === "pending" && admin
      ? h("button", { onclick: async () => { await api("POST", `/machines/${m.id}/approve`); refresh(); } }, "Approve")
      : null)));
  main.replaceChildren(
    h("h1", { text: "Fleet" }),
    enrolCard(admin),
    h("div", { class: "card" }, filters,
      table(["hostname", "status", "hardware", "labels", "last seen", ""], rows),
      pager(machines, (o) => go({ offset: o }))));
}

function enrolCard(admin) {
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
    admin ? h("button", { id: "new-enrollment", onclick: make }, "New enrollment token") : h("p", { class: "muted", text: "An admin makes enrollment tokens." }),
    out);
}
