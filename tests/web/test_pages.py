"""The dashboard's pages are plug-ins: one module each in app/web/static/pages/, listed by the server
in GET /api/v1/registry with every plug-in family, readable by any logged-in user."""

from __future__ import annotations

import re

from app import plugins, web
from app.contracts import BUILT_IN_SUITES, DeviceKind, Precision, Task
from testkit.factories import Api

ROW_KEYS = {"name", "description", "tasks", "precisions", "needs", "available", "reason", "details"}


def test_every_page_module_is_listed_with_its_opening_comment() -> None:
    rows = {row["name"]: row for row in web.pages()}
    assert set(rows) == {"fleet", "machine", "compare", "runtimes", "recommend", "plan", "serving", "jobs", "catalog"}
    for row in rows.values():
        assert set(row) == ROW_KEYS and row["available"] and row["description"]
    assert rows["jobs"]["description"].startswith("Jobs: schedule a suite")


def test_a_page_module_names_itself_by_its_file() -> None:
    """The shell imports pages/<name>.js for each row and keys it by the module's own page.name."""
    for path in sorted(web.PAGES.glob("*.js")):
        text = path.read_text(encoding="utf-8")
        declared = re.search(r'export const page = \{ name: "([a-z_]+)", title: "[^"]+", order: (\d+|null) \};', text)
        assert declared, f"{path.name} does not export its page metadata"
        assert declared.group(1) == path.stem
        assert "export async function render(main, " in text
        assert "innerHTML" not in text


def test_the_registry_serves_every_family_and_the_vocabulary(api: Api) -> None:
    response = api.client.get("/api/v1/registry", headers=api.bearer(api.token("readonly")))
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body["families"]) == {*plugins.FAMILIES, "page"}
    for family, rows in body["families"].items():
        assert rows, f"no {family} plug-in listed"
        for row in rows:
            assert set(row) == ROW_KEYS
            assert row["available"] or row["reason"], f"{family} {row['name']} unavailable without a reason"
    assert body["families"]["page"] == web.pages()
    assert "resnet50" in {row["name"] for row in body["families"]["workload"]}
    assert body["vocabulary"] == {
        "precisions": [p.value for p in Precision],
        "tasks": [t.value for t in Task],
        "device_kinds": [k.value for k in DeviceKind],
        "suites": list(BUILT_IN_SUITES),
    }


def test_the_registry_needs_a_login(api: Api) -> None:
    assert api.client.get("/api/v1/registry").status_code == 401
