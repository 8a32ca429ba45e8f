"""CPU entries of the catalog: dataset rows chosen by cpu_selection.toml, peaks derived by the
per-microarchitecture rules of cpu_architectures.toml, memory bandwidth copied where the row states
it and derived (channels x MT/s x 8 bytes) where not; parts no dataset has come from cpus.toml.

Used by scripts/build_catalog.py and by tests/catalog. Holds no figures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catalog_io import PEAK_FIELDS, Sourced, csv_rows, number, toml

MARKS = r"(?:\(R\)|\(TM\)|®|™)?"
"""What lscpu, /proc/cpuinfo and the datasets put after a brand word, if anything."""


def plain(name: str) -> str:
    """'Intel® Xeon® Gold 6338 Processor' -> 'Intel Xeon Gold 6338' (marks, 'Processor', '(OEM Only)' dropped)."""
    name = re.sub(r"[®™\u200b]", "", name).replace("(OEM Only)", "")
    name = re.sub(r"\s+Processor$", "", name.strip())
    return re.sub(r"\s+", " ", name).strip()


def slug(name: str) -> str:
    """The id: the plain name without the vendor, lowercased, '+' -> 'plus'."""
    name = re.sub(r"^(Intel|AMD) ", "", name).replace("+", "plus")
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def pattern_for(name: str) -> str:
    """The model-name regex: the name's words after the vendor, each possibly followed by (R)/(TM),
    word-bounded, and not followed by another letter, digit or '+' (so 7950X is not 7950X3D)."""
    words = re.sub(r"^(Intel|AMD) ", "", name).split(" ")
    return r"\b" + (MARKS + r"\s+").join(re.escape(w) for w in words) + r"(?![\w+])"


@dataclass
class Row:
    """One dataset row read into the catalog's fields, with the citation of the row."""

    name: str
    dataset: str
    source: str
    figures: dict[str, float | None]
    release_date: str | None = None
    price: tuple[float, str, str] | None = None  # (usd, date, source) of a dated quote
    stated: dict[str, str] = field(default_factory=dict)  # field -> how the row words it


@dataclass(frozen=True)
class CpuRules:
    archs: dict[str, dict[str, Any]]
    selection: dict[str, Any]
    parts: list[dict[str, Any]]


def load_rules(folder: Path) -> CpuRules:
    return CpuRules(
        archs={a["id"]: a for a in toml(folder / "cpu_architectures.toml")["arch"]},
        selection=toml(folder / "cpu_selection.toml"),
        parts=toml(folder / "cpus.toml")["cpu"],
    )


def _mt_s(text: str) -> float | None:
    found = re.search(r"(\d{4})\s*MT/s|DDR\d-(\d{4})", text)
    return float(found.group(1) or found.group(2)) if found else None


class CpuBuilder:
    """Builds CPU entries from the datasets in ``ds`` and the curated tables in ``folder``."""

    def __init__(self, ds: Path, folder: Path, cite: dict[str, str]) -> None:
        self.rules = load_rules(folder)
        self.cite = cite
        self.ds = ds
        self.excluded: dict[str, str] = {}
        """Plain names a rule leaves out, with the reason (for the tests and SOURCES.md)."""

    def rows(self) -> list[Row]:
        """Every row of the CPU datasets, in dataset order: codecarbon's Intel table, then Kaggle's, then AMD's."""
        cc = self.ds / "codecarbon-cpu"
        out: list[Row] = []
        for r in csv_rows(cc / "intel_cpu_ark_dataset.csv"):
            src = f"copied: {self.cite['codecarbon-cpu/intel']}: {r['cpu_name']!r}"
            figures = {
                "cores": number(r["total_cores"]),
                "base_ghz": number(r["processor_base_frequency"]),
                "max_ghz": number(r["max_turbo_frequency"]),
                "l3_mb": number(r["cache"]),
                "tdp_w": number(r["tdp"]),
            }
            out.append(Row(plain(r["cpu_name"]), "intel", src, figures, r["launch_date"] or None))
        tiers = self.rules.selection["kaggle_tiers"]
        for r in csv_rows(self.ds / "intel-ark-kaggle" / "Intel_CPUs.csv"):
            model = r["Processor_Number"]
            if "Scalable" not in r["Product_Collection"] or model[:1] not in tiers:
                continue
            src = f"copied: {self.cite['intel-ark-kaggle']}: Processor_Number {model!r}"
            figures = {
                "cores": number(r["nb_of_Cores"]),
                "threads": number(r["nb_of_Threads"]),
                "base_ghz": number(r["Processor_Base_Frequency"]),
                "max_ghz": number(r["Max_Turbo_Frequency"]),
                "l3_mb": number(r["Cache"]),
                "tdp_w": number(r["TDP"]),
                "memory_channels": number(r["Max_nb_of_Memory_Channels"]),
                "memory_mt_s": _mt_s(r["Memory_Types"]),
                "release_price_usd": number(r["Recommended_Customer_Price"]),
            }
            row = Row(f"Intel Xeon {tiers[model[0]]} {model}", "kaggle", src, figures, r["Launch_Date"] or None)
            row.stated["release_price_usd"] = "Recommended_Customer_Price (low end of the range)"
            out.append(row)
        sel = self.rules.selection
        for r in csv_rows(cc / "amd_cpu_server_dataset.csv"):
            src = f"copied: {self.cite['codecarbon-cpu/amd']}: {r['Name']!r}"
            figures = {
                "cores": number(r["# of CPU Cores"]),
                "threads": number(r["# of Threads"]),
                "base_ghz": number(r["Base Clock"]),
                "all_core_ghz": number(r["All Core Boost Speed"]),
                "max_ghz": number(r["Max. Boost Clock"]),
                "l3_mb": number(r["L3 Cache"]),
                "tdp_w": number(r["Default TDP"]),
                "memory_channels": number(r["Memory Channels"]),
                "memory_mt_s": _mt_s(r["System Memory Specification"]),
                "memory_bandwidth_gb_s": number(r["Per Socket Mem BW"]),
            }
            row = Row(plain(r["Name"]), "amd-server", src, figures, r["Launch Date"] or None)
            usd = number(r["1kU Pricing"])
            if usd:
                row.price = (usd, sel["amd_price_date"], f"{src} 1kU Pricing ({sel['amd_price_note']})")
            out.append(row)
        for r in csv_rows(cc / "amd_cpu_desktop_dataset.csv"):
            src = f"copied: {self.cite['codecarbon-cpu/amd-desktop']}: {r['Name']!r}"
            figures = {
                "cores": number(r["# of CPU Cores"]),
                "threads": number(r["# of Threads"]),
                "base_ghz": number(r["Base Clock"]),
                "max_ghz": number(r["Max. Boost Clock"]),
                "l3_mb": number(r["L3 Cache"]),
                "tdp_w": number(r["Default TDP"]),
                "memory_channels": number(r["Memory Channels"]),
                "memory_mt_s": _mt_s(r["System Memory Specification"]),
            }
            out.append(Row(plain(r["Name"]), "amd-desktop", src, figures, r["Launch Date"] or None))
        return out

    def rule_for(self, row: Row) -> dict[str, Any] | None:
        for rule in self.rules.selection["rule"]:
            if rule["dataset"] == row.dataset and re.search(rule["name"], row.name):
                if "exclude" in rule:
                    self.excluded[row.name] = rule["exclude"]
                    return None
                return rule
        return None

    def parts(self) -> dict[str, tuple[dict[str, Any], list[Row]]]:
        """id -> (selection rule, its rows, primary first) for every selected dataset part."""
        chosen: dict[str, tuple[dict[str, Any], list[Row]]] = {}
        for row in self.rows():
            rule = self.rule_for(row)
            if rule is None:
                continue
            part_id = slug(row.name)
            if part_id in chosen:
                chosen[part_id][1].append(row)
            else:
                chosen[part_id] = (rule, [row])
        return chosen

    def entries(self, openvino: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
        out = [self.build(part_id, rule, rows, openvino) for part_id, (rule, rows) in self.parts().items()]
        for part in self.rules.parts:
            out.append(self.build_curated(part))
        return out

    def _entry(self, name: str, rule: dict[str, Any], vendor: str) -> Sourced:
        arch = self.rules.archs[rule["architecture"]]
        return Sourced(
            {
                "id": slug(name),
                "kind": "cpu",
                "vendor": vendor,
                "name": name,
                "patterns": [pattern_for(name)],
                "architecture": arch["architecture"],
                "segment": rule["segment"],
            }
        )

    def build(
        self, part_id: str, rule: dict[str, Any], rows: list[Row], openvino: dict[str, dict[str, str]]
    ) -> dict[str, Any]:
        name = rows[0].name
        entry = self._entry(name, rule, "Intel" if name.startswith("Intel") else "AMD")
        for row in rows:
            for key, value in row.figures.items():
                stated = f" {row.stated[key]}" if key in row.stated else ""
                entry.put(key, value or None, row.source + stated)
            if entry.data.get("release_date") is None and row.release_date:
                entry.data["release_date"] = row.release_date
            if row.price and entry.data.get("price_usd") is None:
                entry.data["price_usd"], entry.data["price_date"] = row.price[0], row.price[1]
                entry.data["sources"]["price_usd"] = row.price[2]
        entry.data.setdefault("release_date", None)
        pattern = re.compile(entry.data["patterns"][0])
        for platform, row in openvino.items():
            if pattern.search(plain(platform.replace(" CPU-only", ""))):
                src = f"copied: {self.cite['openvino-benchmark']}: {platform!r}"
                entry.put("release_price_usd", number(row["Price/Socket"]), src, override=True)
        self.fill_rules(entry, rule)
        self.derive(entry, rule)
        return entry.data

    def build_curated(self, part: dict[str, Any]) -> dict[str, Any]:
        entry = self._entry(part["name"], part, part["name"].split(" ")[0])
        src = f"copied: {part['source']}"
        for key, value in part["figures"].items():
            if key not in ("p_cores", "e_cores", "e_base_ghz"):
                entry.put(key, float(value), src)
        entry.data["release_date"] = part["release_date"]
        self.fill_rules(entry, part)
        self.derive(entry, part, hybrid=part["figures"], hybrid_source=src)
        return entry.data

    def fill_rules(self, entry: Sourced, rule: dict[str, Any]) -> None:
        """Threads and memory channels/speed by the selection rule where the rows gave none, then bandwidth."""
        data, name = entry.data, entry.data["name"]
        if data.get("threads") is None and "threads_per_core" in rule and data.get("cores"):
            single = rule.get("single_thread") and re.search(rule["single_thread"], name)
            per_core = 1 if single else rule["threads_per_core"]
            entry.put(
                "threads",
                data["cores"] * per_core,
                f"derived: cores x {per_core} thread(s) per core (cpu_selection.toml rule {rule['name']!r})",
            )
        tier = next((m for m in rule.get("memory", []) if re.search(m["model"], name)), None)
        if tier is not None:
            cited = f"derived: {rule['memory_source']}"
            entry.put("memory_channels", float(tier["channels"]), cited)
            entry.put("memory_mt_s", float(tier["mt_s"]), cited)
        channels, mt_s = data.get("memory_channels"), data.get("memory_mt_s")
        if data.get("memory_bandwidth_gb_s") is None and channels and mt_s:
            where = data["sources"]["memory_channels"], data["sources"]["memory_mt_s"]
            said = where[0] if where[0] == where[1] else f"channels: {where[0]}; speed: {where[1]}"
            entry.put(
                "memory_bandwidth_gb_s",
                channels * mt_s * 8 / 1000,
                f"derived: {channels:g} channels x {mt_s:g} MT/s x 8 bytes ({said})",
            )

    def derive(
        self,
        entry: Sourced,
        rule: dict[str, Any],
        *,
        hybrid: dict[str, Any] | None = None,
        hybrid_source: str = "",
    ) -> None:
        """Peaks = cores x base clock x the architecture's (or its variant's) rate per cycle per core."""
        data = entry.data
        arch = self.rules.archs[rule["architecture"]]
        variant = next((v for v in arch.get("variant", []) if re.search(v["name"], data["name"])), None)
        rates = (variant or arch)["flop_per_cycle"]
        data["isa"] = (variant or arch)["isa"]
        why = arch["source"] + (f"; {variant['note']}" if variant else "")
        cores, base = data.get("cores"), data.get("base_ghz")
        if not cores or not base:
            raise SystemExit(f"{data['id']}: the dataset rows give no core count or base clock")
        for precision, per_cycle in rates.items():
            unit = "OP" if precision == "int8" else "FLOP"
            if hybrid:
                e_rate = arch["e_core_flop_per_cycle"].get(precision)
                p, e, e_base = hybrid["p_cores"], hybrid["e_cores"], hybrid["e_base_ghz"]
                value = p * base * per_cycle + (e * e_base * e_rate if e_rate else 0)
                rule_text = (
                    f"{p:g} P-cores x {base:g} GHz x {per_cycle:g} + {e:g} E-cores x {e_base:g} GHz x "
                    f"{e_rate or 0:g} {unit}/cycle (P/E split and E-core base: {hybrid_source})"
                )
            else:
                value = cores * base * per_cycle
                rule_text = f"{per_cycle:g} {unit}/cycle/core x {cores:g} cores x {base:g} GHz base"
            entry.put(PEAK_FIELDS[precision], value / 1000, f"derived: {arch['id']} ({rule_text}; {why})")
