// What the forms offer, read from the server and written nowhere here: workloads, objectives and the
// vocabulary (precisions, tasks, device kinds, suites) from GET /api/v1/registry, plus the workloads that only
// published results cover (the recommender answers for those too).

import { api } from "./api.js";
import { h, options } from "./dom.js";

/** [{name, tasks}] for every workload the recommender can answer for, by name. */
export async function workloads(registry) {
  const tasks = new Map(registry.families.workload.map((w) => [w.name, new Set(w.tasks)]));
  for (const row of await api("GET", "/public-results")) {
    const [name, named] = row.workload.split("/"); // "bert_large_squad/train", or a task field of its own
    const task = row.task ?? named;
    if (!tasks.has(name)) tasks.set(name, new Set());
    if (task) tasks.get(name).add(task);
  }
  const every = registry.vocabulary.tasks;
  return [...tasks.keys()].sort().map((name) => {
    const known = every.filter((t) => tasks.get(name).has(t));
    return { name, tasks: known.length ? known : every };
  });
}

/** A family's plug-in names (objectives, runtimes, ...), in the registry's order. */
export const names = (registry, family) => registry.families[family].map((row) => row.name);

/** The workload and task selects (named "workload" and "task"); the tasks follow the workload. */
export function workloadFields(list, workload, task) {
  const tasksOf = (name) => (list.find((w) => w.name === name) || list[0] || { tasks: [] }).tasks;
  const taskSelect = h("select", { name: "task" }, options(tasksOf(workload), task));
  const workloadSelect = h("select", { name: "workload" }, options(list.map((w) => w.name), workload));
  workloadSelect.addEventListener("change", () => {
    taskSelect.replaceChildren(...options(tasksOf(workloadSelect.value), taskSelect.value));
  });
  return [h("label", {}, "workload", workloadSelect), h("label", {}, "task", taskSelect)];
}

const KIND_LABELS = { cuda: "GPU (cuda)", cpu: "CPU" };

/** Checkboxes (named "device_kind") that keep only the kinds of device ticked: "which GPU" is cuda alone. */
export function deviceKindFields(registry, chosen) {
  return [h("span", { class: "muted", text: "devices:" }),
    ...registry.vocabulary.device_kinds.map((k) => h("label", {},
      h("input", { type: "checkbox", name: "device_kind", value: k, checked: (chosen || []).includes(k) }), KIND_LABELS[k] || k))];
}

/** The ticked device kinds of a form, or null for every kind. */
export function deviceKindsOf(data) {
  const kinds = data.getAll("device_kind");
  return kinds.length ? kinds : null;
}
