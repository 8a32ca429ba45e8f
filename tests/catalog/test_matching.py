"""Matching against the shipped catalog layered with the lab's entries and aliases (no database)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app import catalog
from app.catalog import Matcher
from app.catalog.lab import LabChange, layer
from app.errors import InvalidInput

WHEN = datetime(2025, 3, 1, tzinfo=UTC)


def lab(*changes: LabChange) -> Matcher:
    return Matcher(layer(catalog.load(), changes).values())


def test_a_lab_alias_on_a_shipped_entry_adds_to_its_driver_names() -> None:
    merged = layer(
        catalog.load(),
        [LabChange(id="h100-sxm5-80gb", specs={}, overrides={"aliases": ["GRID H100-80C"]}, updated_at=WHEN)],
    )
    h100 = merged["h100-sxm5-80gb"]
    assert h100.aliases == ["NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5 80GB", "GRID H100-80C"]
    assert h100.sources["aliases"] == "set by a user through the API (2025-03-01): 'GRID H100-80C'"
    matcher = Matcher(merged.values())
    assert matcher.gpu("GRID H100-80C") == (
        "h100-sxm5-80gb",
        "driver name 'GRID H100-80C' is NVIDIA H100 SXM5 80GB",
        "alias",
    )
    assert matcher.gpu("NVIDIA H100 80GB HBM3").catalog_id == "h100-sxm5-80gb", "the shipped names still match"
    assert catalog.match_gpu("GRID H100-80C")[0] is None, "the shipped catalog (the agent's) is unchanged"


def test_the_labs_own_entry_matches_its_aliases_and_only_for_its_kind() -> None:
    own = LabChange(
        id="acme-t9",
        specs={"id": "acme-t9", "kind": "gpu", "vendor": "ACME", "name": "ACME T9", "aliases": ["ACME Tensor 9000"]},
        overrides={},
        updated_at=WHEN,
    )
    matcher = lab(own)
    assert matcher.gpu("acme  tensor-9000") == ("acme-t9", "driver name 'acme  tensor-9000' is ACME T9", "alias")
    assert matcher.cpu("ACME Tensor 9000").catalog_id is None, "a GPU's alias does not name a CPU"
    assert matcher.any("ACME Tensor 9000")[0] == "gpu"


def test_a_cpu_alias_is_exact_and_wins_over_patterns() -> None:
    own = LabChange(
        id="xeon-custom",
        specs={
            "id": "xeon-custom",
            "kind": "cpu",
            "vendor": "Intel",
            "name": "Xeon custom",
            "aliases": ["Intel(R) Xeon(R) Custom 9999"],
        },
        overrides={},
        updated_at=WHEN,
    )
    matcher = lab(own)
    assert matcher.cpu("Intel(R) Xeon(R) Custom 9999") == (
        "xeon-custom",
        "model name 'Intel(R) Xeon(R) Custom 9999' is Xeon custom",
        "alias",
    )
    assert matcher.cpu("Intel(R) Xeon(R) Platinum 8480+").code == "pattern"


@pytest.mark.parametrize("name", ["AMD EPYC", "Intel(R) Xeon(R) Processor", "QEMU Virtual CPU version 2.5+"])
def test_a_generic_virtualised_cpu_name_stays_unmatched_with_the_reason(name: str) -> None:
    found = lab().cpu(name)
    assert found.catalog_id is None and found.code == "generic" and "generic model name" in found.note


def test_two_entries_with_one_alias_are_ambiguous_not_a_match() -> None:
    twin = LabChange(id="l4", specs={}, overrides={"aliases": ["NVIDIA L40S"]}, updated_at=WHEN)
    found = lab(twin).gpu("NVIDIA L40S")
    assert found.catalog_id is None and found.code == "ambiguous" and "l40s" in found.note and "l4," in found.note


def test_a_name_of_neither_kind_says_so() -> None:
    kind, found = lab().any("Voodoo 5 6000")
    assert kind is None and found.code == "unknown" and "'Voodoo 5 6000'" in found.note


def test_a_change_that_makes_an_entry_invalid_is_refused_with_a_hint() -> None:
    broken = LabChange(id="my-gpu", specs={"id": "my-gpu", "kind": "gpu"}, overrides={}, updated_at=WHEN)
    with pytest.raises(InvalidInput, match="my-gpu"):
        layer(catalog.load(), [broken])


def test_an_id_no_entry_has_is_answered_with_the_entry_it_names_or_is_spelled_closest_to() -> None:
    entries = {e.id: e for e in catalog.load()}
    ids = [
        [e.id for e in catalog.meant(entries, asked)] for asked in ("nvidia-h100-80gb-hbm3", "nvidia-h100-sxm5-80gb")
    ]
    assert ids == [["h100-sxm5-80gb"], ["h100-sxm5-80gb"]], "a driver name or an entry's name, written as an id"
    assert "h100-sxm5-80gb" in [e.id for e in catalog.meant(entries, "h100-sxm-80gb")], "a misspelt id"
    assert catalog.meant(entries, "quantum-flux-9000") == [], "nothing close: no guess"
    assert catalog.meant(entries, "xeon-" * 1000) == [], "text no name is that long is not searched for"
