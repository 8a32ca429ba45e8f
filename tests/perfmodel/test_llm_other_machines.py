"""benchmarks/llm_accuracy.py: the language model's CPU bands hold what its calibration, fitted on one
machine, errs by on another (benchmarks/data/llm_heldout/machines.json), as a catalog part's figure is."""

from __future__ import annotations

import math

from app.contracts import RunReport, Task
from app.perfmodel import generation
from benchmarks.llm_accuracy import (
    MIN_MACHINES,
    cpu_band,
    fastest,
    machine_part,
    other_cases,
    other_machine_errors,
    other_machines,
    quantile90,
    vendor_weights,
)


def test_the_shipped_cpu_bands_hold_nine_in_ten_of_another_machines_steps() -> None:
    shipped = generation.shipped()
    elsewhere = other_machine_errors(shipped, other_cases(skip=[]))
    for task in (Task.prefill, Task.decode):
        errors = elsewhere[task]
        band, _kind = shipped.band("cpu", task)
        assert len(errors) >= 10, task
        # the file's weights keep four significant digits: an error may move by about that much
        held = sum(e <= band + 1e-3 for e in errors) / len(errors)
        assert held >= 0.9, (task, band, sorted(errors))


def test_a_run_being_fitted_on_is_not_another_machine() -> None:
    listed = [other.run for other in other_machines()]
    assert listed
    assert other_machine_errors(generation.shipped(), other_cases(skip=listed)) == {}


def test_a_band_is_the_wider_of_the_held_out_presets_and_the_other_machines() -> None:
    held_out = [0.01 * i for i in range(1, 11)]
    assert cpu_band(held_out, []) == quantile90(held_out) == 0.09
    assert cpu_band(held_out, [0.5] * 10) == 0.5
    assert math.isclose(cpu_band(held_out, [0.02] * 10), 0.09)


def test_a_vendors_own_weights_are_kept_where_they_predict_its_machines_held_out_better() -> None:
    shipped = generation.shipped()
    own = vendor_weights(shipped, "AMD", other_cases(skip=[]))
    assert own.kept == shipped.vendor_weights  # what --write stored
    assert "AMD" not in own.kept  # the calibration machine's vendor has the shared weights
    for vendor, key, _steps, before, after in own.compared:
        assert (key in own.kept.get(vendor, {})) == (after < before), (vendor, key)
    # the host part keeps the shared weight: the VMs cannot tell it from the weights' reads
    for vendor, weights in own.kept.items():
        for key, fitted in weights.items():
            assert fitted[generation.HOST] == shipped.weights[key][generation.HOST], (vendor, key)
    # each machine of such a vendor is predicted by weights fitted without it
    for vm, held in own.held_out.items():
        assert held.vendor_weights != own.kept, vm


def test_a_vendor_with_too_few_machines_has_no_weights_of_its_own() -> None:
    intel = {vm: found[0].vendor for vm, found in other_cases(skip=[]).items()}
    vms = sorted(vm for vm, vendor in intel.items() if vendor == "Intel")
    assert len(vms) >= MIN_MACHINES
    dropped = [other.run for other in other_machines() if other.vm in vms[: len(vms) - MIN_MACHINES + 1]]
    own = vendor_weights(generation.shipped(), "AMD", other_cases(skip=dropped))
    assert own.kept == {} and own.held_out == {} and own.compared == []


def test_a_vendors_machines_with_amx_have_weights_of_their_own_against_the_vendors() -> None:
    by_vm = other_cases(skip=[])
    own = vendor_weights(generation.shipped(), "AMD", by_vm)
    tiled = sorted(vm for vm, found in by_vm.items() if found[0].vendor == "Intel" and any(c.tiles for c in found))
    assert len(tiled) >= MIN_MACHINES  # three AMX VMs; the Emerald Rapids VM without AMX is not one
    group = f"Intel/{generation.TILE_GROUP}"
    compared = [(key, before, after) for g, key, _n, before, after in own.compared if g == group]
    assert compared and all(key.endswith("/bf16") for key, _, _ in compared)  # fp32 runs on the vector units
    assert set(own.kept.get(group, {})) == {key for key, before, after in compared if after < before}
    for vm in tiled:  # predicted by the tile group fitted without it, where it measured the task and precision
        measured = {f"cpu/{c.result.task.value}/{c.result.precision.value}" for c in by_vm[vm] if c.tiles}
        for key in measured & set(own.kept.get(group, {})):
            assert own.held_out[vm].vendor_weights.get(group, {}).get(key) != own.kept[group][key], (vm, key)
    assert any(set(own.kept.get(group, {})) & {f"cpu/{c.result.task.value}/bf16" for c in by_vm[vm]} for vm in tiled)
    # the tile group's "before" is the vendor's weights held out, not the shared ones
    vendor_rows = {key: before for g, key, _n, before, _after in own.compared if g == "Intel"}
    assert any(before != vendor_rows[key] for key, before, _ in compared)


def test_a_machine_is_described_by_its_one_thread_copy_where_it_also_copied_at_two() -> None:
    run = next(o.run for o in other_machines() if o.run.name.endswith("llm_prefill_threads.json"))
    report = RunReport.model_validate_json(run.read_text(encoding="utf-8"))
    results, _spread = fastest([report])
    copies = {r.threads: r.bandwidth_gb_per_s for r in results if r.workload == "copy_256mb"}
    assert set(copies) == {1, 2} and copies[2] != copies[1]  # the kept run copied at both
    part = machine_part(report, results, 3.67, {"fp32": 64.0, "bf16": 128.0})
    assert part.memory_bandwidth_gb_s == copies[1]
