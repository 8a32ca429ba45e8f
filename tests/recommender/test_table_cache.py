"""A table missing from the cache is built once, whoever asks for it meanwhile (app/recommender/options.py):
after a new result every ask of the workload misses at once, and builds side by side would share one
interpreter lock, each taking all of their time."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from app.recommender.columns import columns
from app.recommender.options import OptionTable, TableCache

ASKERS = 4
QUIET_S = 1.0
"""How long the first build waits for another thread to start a second one (none should)."""


class Builds:
    """A build that holds on until another build starts, or until QUIET_S has passed."""

    def __init__(self, fail: bool = False) -> None:
        self.count = 0
        self.fail = fail
        self.lock = threading.Lock()
        self.another = threading.Event()

    def __call__(self) -> OptionTable:
        with self.lock:
            self.count += 1
            first = self.count == 1
        if not first:
            self.another.set()
        else:
            self.another.wait(QUIET_S)
        if self.fail:
            raise RuntimeError("the database went away")
        return OptionTable(columns([]), [f"build {self.count}"], {}, [])


def ask_together(cache: TableCache, build: Builds) -> list[OptionTable | BaseException]:
    def ask() -> OptionTable | BaseException:
        try:
            return cache.get("resnet50 infer", build)
        except RuntimeError as error:
            return error

    with ThreadPoolExecutor(ASKERS) as pool:
        return list(pool.map(lambda _: ask(), range(ASKERS)))


def test_askers_of_a_missing_table_wait_for_one_build_and_share_its_table() -> None:
    cache, build = TableCache(), Builds()
    answers = ask_together(cache, build)
    assert build.count == 1
    assert all(a is answers[0] for a in answers) and isinstance(answers[0], OptionTable)
    assert cache.get("resnet50 infer", build) is answers[0] and build.count == 1  # kept


def test_a_failed_build_fails_its_waiters_and_the_next_ask_builds_again() -> None:
    cache, build = TableCache(), Builds(fail=True)
    answers = ask_together(cache, build)
    assert build.count == 1
    assert all(isinstance(a, RuntimeError) for a in answers)
    build.fail = False
    assert cache.get("resnet50 infer", build).notes_before == ["build 2"]


def test_a_table_asked_for_again_while_its_own_build_runs_is_built_not_waited_for() -> None:
    cache = TableCache()

    def inner() -> OptionTable:
        return OptionTable(columns([]), ["inner"], {}, [])

    def outer() -> OptionTable:
        assert cache.get("same", inner).notes_before == ["inner"]
        return OptionTable(columns([]), ["outer"], {}, [])

    assert cache.get("same", outer).notes_before == ["outer"]


def test_tables_of_different_keys_are_built_each() -> None:
    cache = TableCache()

    def builder(key: str) -> Callable[[], OptionTable]:
        return lambda: OptionTable(columns([]), [key], {}, [])

    made = [cache.get(k, builder(k)) for k in ("a", "b")]
    assert [t.notes_before for t in made] == [["a"], ["b"]]
