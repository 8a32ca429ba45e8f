"""Schemathesis hooks that send the classes of input that once made the server fail with a 500 and
that generation from the schema alone almost never produces (benchmarks/fuzz.py loads this file
through SCHEMATHESIS_HOOKS):

- a NUL character in a string of a body (a value or a key, at any depth), in a query parameter or
  in a path parameter: PostgreSQL cannot store or compare one;
- a naive time, or one whose UTC value leaves years 1-9999, wherever the schema says ``date-time``;
- deep nesting: a JSON value hundreds of levels deep in place of a body's value, and text nested
  as deep (``x = [[[[...]]]]``) in place of a string, which a server parsing that text (a suite's
  TOML, a CSV) must refuse rather than recurse into.

Schemathesis allows NUL (``generation.allow-x00``) already, but a random string rarely holds one,
so about half of the generated bodies and parameters get one of these instead of their value. The
rest are left as generated, so coverage of the valid paths stays.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import schemathesis
from hypothesis import strategies as st

NUL = "\x00"
DEPTH_TEXT = 3000
DEPTH_JSON = 200  # far deeper, and the tools on the way (JSON encoder, Hypothesis printing a case) recurse out
Path = tuple[str | int, ...]


# --------------------------------------------------------------------------- date-time

_OFFSETS = st.integers(-14 * 60, 14 * 60).map(lambda minutes: timezone(timedelta(minutes=minutes)))
_EXTREMES = (
    "0001-01-01T00:00:00+14:00",  # year 0 in UTC
    "9999-12-31T23:59:59-14:00",  # year 10000 in UTC
    "0001-01-01T00:00:00",
    "9999-12-31T23:59:59.999999",
)
DATE_TIMES = st.one_of(
    st.datetimes(timezones=st.just(UTC)).map(datetime.isoformat),  # valid
    st.datetimes(timezones=_OFFSETS).map(datetime.isoformat),  # any offset: near the ends, outside UTC's range
    st.datetimes().map(datetime.isoformat),  # naive
    st.sampled_from(_EXTREMES),
)
schemathesis.openapi.format("date-time", DATE_TIMES)


# --------------------------------------------------------------------------- bodies


def _paths(value: Any, path: Path = ()) -> tuple[list[Path], list[Path]]:
    """Paths to every string value, and to every mapping (whose keys can take a NUL)."""
    strings: list[Path] = []
    mappings: list[Path] = []
    if isinstance(value, str):
        strings.append(path)
    elif isinstance(value, dict):
        mappings.append(path)
        for key, item in value.items():
            more_strings, more_mappings = _paths(item, (*path, key))
            strings += more_strings
            mappings += more_mappings
    elif isinstance(value, list):
        for index, item in enumerate(value):
            more_strings, more_mappings = _paths(item, (*path, index))
            strings += more_strings
            mappings += more_mappings
    return strings, mappings


def _replace(body: Any, path: Path, new: Any) -> Any:
    if not path:
        return new
    body = copy.deepcopy(body)
    parent = body
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = new
    return body


def _get(body: Any, path: Path) -> Any:
    for step in path:
        body = body[step]
    return body


def _with_nul(text: str, at: int) -> str:
    at = min(at, len(text))
    return text[:at] + NUL + text[at:]


def _deep_value(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def _deep_text(depth: int) -> str:
    return "name = 'deep'\nx = " + "[" * depth + "]" * depth + "\n"


def _hostile_bodies(body: Any) -> st.SearchStrategy[Any]:
    strings, mappings = _paths(body)
    options: list[st.SearchStrategy[Any]] = []
    if strings:
        picked = st.sampled_from(strings)
        options.append(
            st.tuples(picked, st.integers(0, 64)).map(lambda p: _replace(body, p[0], _with_nul(_get(body, p[0]), p[1])))
        )
        options.append(picked.map(lambda path: _replace(body, path, _deep_text(DEPTH_TEXT))))
    keyed = [path for path in mappings if _get(body, path)]
    if keyed:

        def nul_in_key(path: Path) -> Any:
            mapping = dict(_get(body, path))
            key = next(iter(mapping))
            mapping[_with_nul(str(key), 1)] = mapping.pop(key)
            return _replace(body, path, mapping)

        options.append(st.sampled_from(keyed).map(nul_in_key))
    if isinstance(body, dict) and body:
        options.append(st.sampled_from(sorted(body)).map(lambda key: _replace(body, (key,), _deep_value(DEPTH_JSON))))
    return st.one_of(options) if options else st.just(body)


@schemathesis.hook
def flatmap_body(_context: Any, body: Any) -> st.SearchStrategy[Any]:
    return st.one_of(st.just(body), _hostile_bodies(body))


# --------------------------------------------------------------------------- parameters


def _nul_in_a_value(values: dict[str, Any] | None) -> st.SearchStrategy[dict[str, Any] | None]:
    names = sorted(name for name, value in (values or {}).items() if isinstance(value, str))
    if not values or not names:
        return st.just(values)
    hostile = st.tuples(st.sampled_from(names), st.integers(0, 16)).map(
        lambda p: {**values, p[0]: _with_nul(values[p[0]], p[1])}
    )
    return st.one_of(st.just(values), hostile)


@schemathesis.hook
def flatmap_query(_context: Any, query: dict[str, Any] | None) -> st.SearchStrategy[dict[str, Any] | None]:
    return _nul_in_a_value(query)


@schemathesis.hook
def flatmap_path_parameters(
    _context: Any, path_parameters: dict[str, Any] | None
) -> st.SearchStrategy[dict[str, Any] | None]:
    return _nul_in_a_value(path_parameters)
