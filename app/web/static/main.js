// The dashboard's shell: the login, the menu and a hash router over the pages (#/name/rest?params).
// A page is a plug-in: one file in pages/ exporting `page` ({name, title, order}: order places it in
// the menu; a page without one is reached by links) and `render(main, ctx)`. The shell learns which
// pages exist from GET /api/v1/registry (the server lists pages/) and imports them: adding a page is
// adding its file. Plain JavaScript modules over the REST API, no build step.

import { api, ApiError, whenExpired } from "./api.js";
import { destroyCharts } from "./charts.js";
import { failure, h } from "./dom.js";

const state = { kind: null, registry: null, pages: new Map(), timer: null };

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
      // a wrong token answers 401: that is this form's answer, not an ended session, so the form stays
      await api("POST", "/session", { token: input.value.trim() }, { loggingIn: true });
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

whenExpired(() => { state.kind = null; showLogin(); });

/** Which pages exist (the server's registry) and their modules; the menu from their metadata. */
async function loadPages() {
  state.registry = await api("GET", "/registry");
  const rows = state.registry.families.page;
  const loaded = await Promise.allSettled(rows.map((row) => import(`./pages/${row.name}.js`)));
  state.pages = new Map();
  loaded.forEach((outcome, i) => {
    if (outcome.status === "fulfilled") state.pages.set(outcome.value.page.name, outcome.value);
    else console.error(`page ${rows[i].name} did not load: ${outcome.reason}`);
  });
  document.getElementById("nav").replaceChildren(...menu().map(({ page }) =>
    h("a", { href: "#/" + page.name, "data-page": page.name, text: page.title })));
}

const menu = () => [...state.pages.values()].filter((m) => m.page.order !== null && m.page.order !== undefined)
  .sort((a, b) => a.page.order - b.page.order);

let navigation = 0; // which route() call is the latest: an earlier, slower one must not draw over it

async function route() {
  const current = ++navigation;
  clearTimeout(state.timer);
  destroyCharts();
  const [path, search] = location.hash.replace(/^#\/?/, "").split("?");
  const [name, ...rest] = path.split("/");
  if (!state.kind) await whoAmI();
  if (!state.kind) { showLogin(); return; }
  try {
    if (!state.registry) await loadPages();
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 401)) failure(document.getElementById("main"), e);
    return;
  }
  if (current !== navigation) return;
  // Each navigation draws into a view of its own, so an earlier, slower one draws into a detached
  // view; a refresh of the same address redraws its view in place (no blank page while it loads).
  const host = document.getElementById("main");
  let main = host.firstElementChild;
  if (!main || main.dataset.hash !== location.hash) {
    main = document.createElement("div");
    main.dataset.hash = location.hash;
    host.replaceChildren(main);
  }
  const module = state.pages.get(name) || menu()[0];
  if (!module) { failure(main, new Error("no dashboard page could be loaded")); return; }
  const shown = module.page.name;
  for (const link of document.querySelectorAll("#nav a")) link.classList.toggle("active", link.dataset.page === shown);
  document.body.dataset.page = shown;
  document.body.dataset.ready = "";
  const ctx = {
    params: new URLSearchParams(search || ""),
    path: rest,
    admin: state.kind === "admin",
    registry: state.registry,
    refresh: route,
    refreshIn: (ms) => { state.timer = setTimeout(route, ms); },
  };
  try {
    await module.render(main, ctx);
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 401)) failure(main, e);
  }
  if (current !== navigation) return;
  document.body.dataset.readyMs = String(Math.round(performance.now())); // since navigation start
  document.body.dataset.ready = shown;
}

window.addEventListener("hashchange", route);
route(); // a module runs once the document is parsed, after Chart.js (a deferred script before it)
