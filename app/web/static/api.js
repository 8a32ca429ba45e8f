// The REST API (/api/v1) as the dashboard calls it: the session cookie, the CSRF header on every call
// (double submit: the hwa_csrf cookie's value), and an error that carries the status and the detail.

export const API = "/api/v1";

export class ApiError extends Error {
  /** `problem`: the problem+json body where there was one (a 422's `errors` name the refused fields). */
  constructor(status, detail, problem) { super(detail); this.status = status; this.problem = problem || null; }
}

let onExpired = () => {};

/** What to do when a call answers 401 (the session ended): the shell shows the login. */
export function whenExpired(handler) { onExpired = handler; }

function cookie(name) {
  const found = document.cookie.split("; ").find((c) => c.startsWith(name + "="));
  return found ? decodeURIComponent(found.slice(name.length + 1)) : "";
}

/**
 * Call the API; the parsed JSON (or text) back, or an ApiError thrown.
 * `loggingIn`: a 401 is the answer to a wrong token, not an ended session (the login form stays).
 */
export async function api(method, path, body, { contentType, loggingIn = false } = {}) {
  const headers = { "X-CSRF-Token": cookie("hwa_csrf") };
  let payload;
  if (body !== undefined) {
    headers["Content-Type"] = contentType || "application/json";
    payload = contentType ? body : JSON.stringify(body);
  }
  const response = await fetch(API + path, { method, headers, body: payload, credentials: "same-origin" });
  if (response.status === 204) return null;
  const data = response.headers.get("content-type")?.includes("json") ? await response.json() : await response.text();
  if (!response.ok) {
    if (response.status === 401 && !loggingIn) onExpired();
    throw new ApiError(response.status, (data && data.detail) || response.statusText, typeof data === "object" ? data : null);
  }
  return data;
}

/** "?a=1&b=2" from the parameters that have a value ("" when none has). */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== "" && v !== null && v !== undefined) q.set(k, v);
  const s = q.toString();
  return s ? "?" + s : "";
}

/** Every item of a paged list ({items, total}), asked for `size` at a time. */
export async function everyItem(path, params = {}, size = 500) {
  const items = [];
  for (;;) {
    const page = await api("GET", path + query({ ...params, limit: size, offset: items.length }));
    items.push(...page.items);
    if (!page.items.length || items.length >= page.total) return items;
  }
}
