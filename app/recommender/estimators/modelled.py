"""Modelled: the performance model (app/perfmodel) on the part's catalog figures, calibrated.

The model predicts the step time from the workload's operator profile and the part's peaks,
bandwidth and cache, with parameters learned from every measurement shipped (published results) and
a correction from the lab's own: for the lab's configs, the model is scaled by what the lab's
devices of the same kind measured over what the model says for them (their measured / modelled
ratio, the geometric mean over devices). A reference run hwadvisor ships counts as one such device
(app/catalog/reference.py): the model says how parts differ, which is what it was validated on, and
the measurement says how fast the lab's own stack runs the workload. With no measurement of that
runtime and precision on that kind of device, or with measurements of it only far from the batch (or as
far, on fewer machines, at a step the host bounds), a GPU's fp16 takes bf16's ratio and the other way round
(their *twin*, app/perfmodel/references.py ``TWINS``: the same tensor units; ``_twin``) with the
``gpu-twin`` band at least; with none at either, the model stands alone (eager PyTorch) with the wider
band that kind of estimate earned. A GPU's TF32 figure that no device
of its part measured is never below its FP32 figure where the device bounds the step (``_plain``). A
calibrated figure's band is the transfer's (``gpu-transfer``: each reference run predicted from another
this way, scripts/calibrate_perfmodel.py), or the kind's
leave-one-part-out band where no such pair exists (CPUs). A published source's configs carry that
source's stack factor (NGC containers, DALI, fused optimisers) and its traffic factor (the memory
traffic and elementwise work its stack does per sample, relative to eager PyTorch). A config that does
not fit in the part's memory is said so, not dropped.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache

from app.catalog.probed import bounded
from app.contracts import DeviceKind, EstimateKind, PowerBasis, Precision, ReasonCode
from app.perfmodel import lab_levels
from app.perfmodel.bands import as_pct, in_regime
from app.perfmodel.calibrate import traffic_group
from app.perfmodel.device import matrix_unit, peak_field
from app.perfmodel.generation import zoo_factor
from app.perfmodel.model import dispatch_of
from app.perfmodel.observations import group_of, how_run
from app.perfmodel.params import shipped as calibration
from app.perfmodel.predict import Ask, Prediction, answer, band_of, machine_band, prime, why_not
from app.perfmodel.references import TWINS, at_batch, reach
from app.perfmodel.split import Timed, fit
from app.recommender.estimators.base import (
    Calibrating,
    Config,
    Correction,
    Estimator,
    EstimatorInfo,
    Evidence,
    LabCorrection,
    Moving,
    Ratios,
    RatiosAt,
    estimators,
)
from app.recommender.evidence import LAB, REFERENCE, Hardware, by_batch
from app.recommender.guess import Guess
from app.recommender.power import modelled_draw
from app.recommender.reasons import Why, fewer_threads

MIN_MODELLED_PCT = 5.0
GRAPH_GPU_GAP = (3.7, 6.7)
"""How many times faster MLPerf Inference's TensorRT int8 ran than the model's figure for a graph runtime
on the same GPUs (T4, A100, RTX 4090; never fitted): benchmarks/accuracy.py's fourth section, 0.15-0.27.
Too few runs (6) for a conformal band, so a GPU graph runtime no lab device measured says so in words."""


def graph_uncalibrated(runtime: str) -> Why:
    """The words a GPU graph runtime's model figure carries where no measurement checks it (``GRAPH_GPU_GAP``)."""
    low, high = GRAPH_GPU_GAP
    return Why(ReasonCode.graph_uncalibrated, {"runtime": runtime, "low": low, "high": high})


LANGUAGE_RUNS = "hwadvisor's own prefill and decode runs (app/perfmodel/data/llm.json), as the serving planner is"
"""What calibrates a language model's step that no lab device measured (``_language_model``)."""
BROKEN_LOG_RATIO = math.log(1000.0)
"""A measurement a thousand times off the model is not evidence of the model's error, which the
published and reference checks put within a few times (docs/ACCURACY.md): it is a broken (or hostile)
upload, and it would carry its error to every part the lab's ratio calibrates."""
MODEL = "model"
"""The source of a figure made from the catalog's specs and the profile alone (the contract's word)."""
PLAIN = {Precision.tf32: Precision.fp32}
"""A precision that differs from another only in its matrix units' math mode: the same tensors in memory,
so the same kernels' traffic and the same host path (TF32 is cuBLAS's and cuDNN's math mode on FP32
tensors), with a matrix peak no lower (``_plain``)."""


@estimators.register
class Modelled(Estimator):
    info = EstimatorInfo(
        name="modelled",
        description="The performance model: the workload's operator profile on the part's specs, "
        "calibrated on published and lab measurements; band from leave-one-part-out errors.",
        order=3,
    )

    @staticmethod
    def estimate(hardware: Hardware, config: Config, evidence: Evidence) -> Guess | None:
        if hardware.spec is None or not evidence.workload or evidence.variant is not None:
            return None
        key = (config, "model:" + hardware.spec.id, hardware.ref.kind)
        if key not in evidence.predictions:
            evidence.predictions[key] = _modelled(hardware, config, evidence)
        return evidence.predictions[key]

    @staticmethod
    def prepare(pairs: Sequence[tuple[Hardware, Config]], evidence: Evidence) -> None:
        """Model every pair in one array evaluation (app/perfmodel/predict.py ``prime``)."""
        if evidence.workload and evidence.variant is None:
            asks = (_ask(h, c, evidence) for h, c in pairs if h.spec is not None and _why_not(h, c, evidence) is None)
            prime(evidence.workload, evidence.task, asks)


def _ask(hardware: Hardware, config: Config, evidence: Evidence) -> Ask:
    assert hardware.spec is not None
    threads = config.threads if hardware.ref.kind is DeviceKind.cpu else None
    traffic, streams = 1.0, 1
    if config.source != LAB:
        group = traffic_group(group_of(config.source, evidence.workload, evidence.task, config.precision))
        traffic = calibration().traffic.get(group, 1.0)
        threads, streams = how_run(config.source, hardware.spec)
    return Ask(config.precision, config.batch_size, hardware.spec, config.runtime, threads, traffic, streams)


def _predict(hardware: Hardware, config: Config, evidence: Evidence) -> Prediction | None:
    return answer(evidence.workload, evidence.task, _ask(hardware, config, evidence))


def lab_correction(
    runtime: str,
    precision: Precision,
    kind: DeviceKind,
    evidence: Evidence,
    batch: int | None = None,
    vendor: str | None = None,
    part: str | None = None,
    step: tuple[float, float] | None = None,
    unit: str | None = None,
) -> LabCorrection | None:
    """The lab's measured / modelled ratio for this runtime and precision on devices of ``kind``
    (geometric mean over devices; a reference run's part is one), with the devices it stands on; None
    when none measured it. A device of the target's own ``part`` gives its ratio at ``batch``
    (``at_batch``): the model's error moves with the batch, from host-bound to compute-bound. A device of
    another part gives that ratio moved by its split correction (app/perfmodel/split.py) from its own
    modelled step at the batch to the target's ``step`` (the model's host and device seconds), since the
    same batch can be host-bound on one part and device-bound on another; without a step, its ratio at
    the batch unmoved. Where a reference run measured the target's own ``part``, it speaks for
    hwadvisor's runs alone (an H100 asked at a batch its run did not measure is that run's curve, not its
    mean with an H200's); the lab's devices always count, theirs being the lab's stack. A reference run's
    part counts only for parts of its ``vendor`` (a stack is never carried across). On a CPU only devices
    whose precision runs on the target's matrix ``unit`` count (AMX's tiles or the vector units:
    app/perfmodel/device.py ``matrix_unit``)."""
    at = _ratios_at(runtime, precision, kind, vendor, batch, evidence)
    own = part is not None and part in at.reference_parts
    key = (part if own else None, unit)
    if key not in at.made:
        alike = [(d, r) for d, r in at.ratios if d.unit == unit]
        chosen = [(d, r) for d, r in alike if d.source == LAB or d.part == part] if own else alike
        correction = _mean(chosen, batch, runs_alone=own and all(d.source != LAB for d, _ in chosen))
        moving = _moving(chosen, (runtime, precision, kind, vendor), batch, evidence) if correction else ()
        at.made[key] = Calibrating(correction, moving) if correction is not None else None
    made = at.made[key]
    if made is None:
        return None
    mine = part is not None and part in at.parts
    if step is None:
        return made.correction._replace(own=mine)
    moved = sum(m.share * (m.split.ratio(*step) - m.at_own) for m in made.moving if m.part != part)
    return made.correction._replace(factor=made.correction.factor * math.exp(moved), own=mine)


def _moving(
    chosen: Sequence[tuple[Ratios, float]], key: Correction, batch: int | None, evidence: Evidence
) -> tuple[Moving, ...]:
    """The chosen devices in groups of one source, part and thread count (a fleet of one part moves as
    one): each group's share, its split correction fitted on its devices' steps together, and that
    split's ratio at the group's own modelled step at ``batch`` (where the move starts from)."""
    if batch is None:
        return ()
    runtime, precision, _, _ = key
    groups: dict[tuple[str, str, int | None], list[Ratios]] = {}
    for d, _ in chosen:
        groups.setdefault((d.source, d.part, d.threads), []).append(d)
    moving = []
    for (source, part, threads), devices in groups.items():
        if (key, source, part, threads) not in evidence.splits:
            timed = [t for d in devices for t in d.timed]
            evidence.splits[(key, source, part, threads)] = fit(timed, devices[0].kind)
        split = evidence.splits[(key, source, part, threads)]
        own = _predict(devices[0].hardware, Config(runtime, precision, batch, threads), evidence)
        at_own = split.ratio(own.breakdown.host_s, own.breakdown.device_s) if own is not None else 0.0
        moving.append(Moving(part, len(devices) / len(chosen), split, at_own))
    return tuple(moving)


def _mean(chosen: Sequence[tuple[Ratios, float]], batch: int | None, runs_alone: bool = False) -> LabCorrection | None:
    """The devices' geometric mean ratio; how far ``batch`` lies outside the batches they measured; and,
    where a part's own reference runs stand alone (``runs_alone``: no lab device beside them), whether it
    lies strictly between their batches."""
    if not chosen:
        return None
    measured = [b for d, _ in chosen for b, _ in d.points]
    return LabCorrection(
        math.exp(sum(r for _, r in chosen) / len(chosen)),
        tuple(sorted(d.label for d, _ in chosen)),
        between=min(measured) < batch < max(measured) if runs_alone and batch is not None else None,
        reach=0.0 if batch is None else reach(batch, measured),
        systems=sum(d.systems_near(batch) for d, _ in chosen),
    )


def _ratios_at(
    runtime: str, precision: Precision, kind: DeviceKind, vendor: str | None, batch: int | None, evidence: Evidence
) -> RatiosAt:
    """Each device's log ratio at ``batch``, worked out once per batch whatever parts ask."""
    key = (runtime, precision, kind, vendor, batch)
    if key not in evidence.ratios_at:
        per_device = _measured_ratios(runtime, precision, kind, vendor, evidence)
        ratios = [(d, at_batch(d.points, batch)) for d in per_device.values()]
        evidence.ratios_at[key] = RatiosAt(
            ratios=ratios,
            parts={d.part for d, _ in ratios},
            reference_parts={d.part for d, _ in ratios if d.source != LAB},
            made={},
        )
    return evidence.ratios_at[key]


def _measured_ratios(
    runtime: str, precision: Precision, kind: DeviceKind, vendor: str | None, evidence: Evidence
) -> dict[str, Ratios]:
    """Per device that measured the runtime and precision (lab's and reference runs'): its label, source,
    part, and per point (batch, log of measured / modelled) and the model's step beside the measured
    one, worked out once per ask whatever batches and parts it serves."""
    key = (runtime, precision, kind, vendor)
    if key in evidence.corrections:
        return evidence.corrections[key]
    per_device: dict[str, Ratios] = {}
    sources = [src for (src, r, q) in evidence.by_config if r == runtime and q is precision and by_batch(src)]
    for source in sorted(sources):
        for p in evidence.by_config[(source, runtime, precision)]:
            if p.hardware.spec is None or p.hardware.ref.kind is not kind:
                continue
            if source != LAB and p.hardware.spec.vendor != vendor:
                continue
            modelled = _predict(p.hardware, Config(runtime, precision, p.batch_size, p.threads), evidence)
            if modelled is not None and modelled.throughput > 0:
                device = p.hardware.key if source == LAB else f"{source} {p.hardware.key}"
                label = p.hardware.label if source == LAB else f"{p.hardware.label} ({source})"
                ratio = math.log(p.throughput / modelled.throughput)
                if abs(ratio) > BROKEN_LOG_RATIO:
                    continue
                b = modelled.breakdown
                unit = matrix_unit(p.hardware.spec, precision)
                found = per_device.setdefault(
                    device, Ratios(label, source, p.hardware.spec.id, modelled.band_kind, p.hardware, p.threads, unit)
                )
                found.points.append((p.batch_size, ratio))
                found.systems[p.batch_size] = max(found.systems.get(p.batch_size, 0), p.systems)
                found.timed.append(Timed(b.host_s, b.device_s, b.seconds * modelled.throughput / p.throughput))
    evidence.corrections[key] = per_device
    return per_device


LAB_LEVEL = "published results, with the CPU level hwadvisor's own lab CPUs measured in this runtime"
"""What calibrated a CPU figure no lab device did, in a runtime whose level the lab CPUs' figures set
(app/perfmodel/lab_levels.py)."""


@lru_cache(maxsize=4096)
def _calibrated_by(references: tuple[str, ...]) -> str:
    if not references:
        return "published results only"
    runs = sorted({r[r.index("(reference:") + 1 : -1] for r in references if "(reference:" in r})
    lab = len(references) - sum("(reference:" in r for r in references)
    said = [f"{lab} lab device(s)"] if lab else []
    return ", ".join(said + [f"hwadvisor's reference run {run}" for run in runs])


@lru_cache(maxsize=4096)
def _source_of(references: tuple[str, ...]) -> str:
    """'lab' where a lab device calibrated the figure; a reference run's source where only it did;
    the model's where nothing did."""
    if not references:
        return MODEL
    if all("(reference:" in r for r in references):
        return references[0][references[0].index("(reference:") + 1 : -1]
    return LAB


def _published_vendors(config: Config, evidence: Evidence) -> set[str]:
    return {
        p.hardware.spec.vendor
        for p in evidence.by_config.get((config.source, config.runtime, config.precision), [])
        if p.hardware.spec is not None
    }


def _why_not(hardware: Hardware, config: Config, evidence: Evidence) -> str | None:
    """Why the model does not speak for this pair at all; None when it does."""
    assert hardware.spec is not None
    if config.precision is Precision.int8 and dispatch_of(config.runtime) == "eager":
        return "eager PyTorch runs no int8 model on these devices: int8 is a graph runtime's"
    if config.source != LAB and by_batch(config.source):
        return "a reference run's figures calibrate the model in the lab's configs (lab_correction), not a stack"
    if config.source != LAB and hardware.spec.vendor not in _published_vendors(config, evidence):
        return "a published stack (NGC's CUDA, OpenVINO's oneDNN) is never carried to another vendor"
    return None


def why_unmodelled(hardware: Hardware, config: Config, evidence: Evidence) -> str:
    """Why the model gave no figure for this pair, in words: the estimator's own reason (eager int8, a
    stack carried to another vendor), else the profile's or the catalog's (``predict.why_not``)."""
    assert hardware.spec is not None
    return (
        _why_not(hardware, config, evidence)
        or why_not(evidence.workload, evidence.task, config.precision, hardware.spec)
        or f"it has no figure for {config.runtime} at {config.precision.value} on {hardware.ref.name}"
    )


def _band(
    kind: str, runtime: str, correction: LabCorrection | None, regime: str, part: bool, unit: str | None
) -> float:
    """The band a lab-stack figure earned, measured on steps of its ``regime`` (host- or device-bound,
    app/perfmodel/bands.py) where the calibration could: the model's alone where nothing calibrated it
    (on a CPU, for a runtime whose level the lab CPUs' figures set, their leave-one-machine-out band);
    a part's own reference run between its batches, leave-one-batch-out; beyond them, the wider of that
    and the transfer's; else the transfer's. Far beyond every batch the calibrating devices measured
    (``references.BEYOND_NEAR``), never narrower than the nearest ratio carried that far errs
    (``beyond``, where the calibration measured it). A figure for a catalog ``part`` (not a lab device)
    stands for any machine of it: never narrower than how far machines of one part measure apart
    (``machine``). A CPU precision on tile ``unit``s (AMX) is not the lab level's: the model's alone."""
    if correction is None:
        alone = lab_levels.BAND if lab_levels.levelled(kind, runtime, unit) else f"{kind}-uncalibrated"
        band = _regime_band(alone, regime, f"{kind}-uncalibrated")
    elif correction.between is None:
        band = _regime_band(f"{kind}-transfer", regime, kind)
    else:
        between = _regime_band(f"{kind}-between", regime, f"{kind}-transfer", kind)
        band = between if correction.between else max(between, _regime_band(f"{kind}-transfer", regime, kind))
    if correction is not None and correction.beyond:
        band = max(band, _regime_band(f"{kind}-beyond", regime, f"{kind}-transfer", kind))
    return max(band, machine_band(kind, regime)) if part else band


def _regime_band(name: str, regime: str, *otherwise: str) -> float:
    return band_of(in_regime(name, regime), name, *otherwise)


def _language_model(
    hardware: Hardware, config: Config, evidence: Evidence, modelled: Prediction
) -> tuple[float, float, int | None] | None:
    """A zoo language model's prefill or decode that no lab device calibrates, calibrated as the serving
    planner's steps are (app/perfmodel/generation.py ``zoo_factor``): the factor and band of hwadvisor's
    own prefill and decode runs, where they speak for the kind, vendor and runtime; a catalog part's band
    no narrower than machines of one part measure apart. Without it the recommender's H100 decode step of
    llama3_1b at batch 1 was the model's 12.2 ms where ``plan-serving`` said 6.9 ms."""
    assert hardware.spec is not None
    found = zoo_factor(
        evidence.workload,
        evidence.task,
        config.precision,
        config.batch_size,
        hardware.spec,
        config.runtime,
        modelled.breakdown,
        config.threads,
    )
    if found is None:
        return None
    factor, band, product_threads = found
    if not hardware.ref.owned:
        band = max(band, machine_band(modelled.band_kind, modelled.regime))
    return factor, band, product_threads


def _twin(
    precision: Precision,
    kind: str,
    correction: LabCorrection | None,
    measured_at: Callable[[Precision], LabCorrection | None],
    regime: str,
) -> LabCorrection | None:
    """The twin precision's (``TWINS``) correction where it calibrates a GPU's figure instead of the
    precision's own: where nothing measured the precision, or its measurements all lie far from the batch
    (``beyond``) and the twin's lie nearer (``reach``). The same tensor units measured near the batch say
    more than the precision measured far from it: on the reference runs a 16-bit figure carried from the
    twin at its own batch errs less (``gpu-twin``, 90% of log errors within 0.35-0.37) than one carried
    from the nearest batch more than BEYOND_NEAR times away (``gpu-beyond``, 0.57-0.71). ResNet-50
    inference in fp16, which the runs measured at batch 256 alone, was 2.1x its bf16 figure at batch 1
    before this rule. Where both lie equally far and the model puts the step asked on the host, the one
    more systems measured there calibrates it: the host's per-operator cost is the same at either
    precision, and machines of one part run such a step up to 3x apart (docs/ACCURACY.md, session 45:
    the H200's DistilBERT training in fp16 stood on one fast machine at batch 32, bf16 on four runs, and
    at batch 1 fp16 was 1.61x bf16)."""
    twin = TWINS.get(precision) if kind == "gpu" else None
    if twin is None or (correction is not None and not correction.beyond):
        return None
    at_twin = measured_at(twin)
    if at_twin is None or correction is None:
        return at_twin
    nearer = at_twin.reach < correction.reach and not math.isclose(at_twin.reach, correction.reach)
    wider = regime == "host" and math.isclose(at_twin.reach, correction.reach) and at_twin.systems > correction.systems
    return at_twin if nearer or wider else None


def _twin_read(hardware: Hardware, config: Config, evidence: Evidence) -> tuple[float, int, Precision] | None:
    """The board power devices of this very part read running the twin precision's config (``TWINS``) at
    this batch and threads, in the lab's stack or a reference run's (median, how many, the twin): the
    same tensor units doing the same work. On a GPU this is its power rather than the power model's,
    which errs by its band where the reading does not, whether the twin calibrates the figure or another
    part's run of the precision asked does: measured is never replaced by modelled. An H100's fp16
    BERT-base at batch 256 was modelled at 543 W beside its bf16 twin's 684 W on NVML, and under a 300 W
    budget was capped less and ranked above it; its fp16 training there, calibrated by the H200's fp16
    run, was modelled at 501 W beside the bf16 twin's 691 W, and ranked 14% above it under 400 W."""
    twin = TWINS.get(config.precision)
    if twin is None:
        return None
    read = [
        p.power_w
        for source in evidence.sources
        if source == LAB or source.startswith(REFERENCE)
        for p in evidence.at(hardware, replace(config, source=source, precision=twin))
        if p.power_w
    ]
    return (statistics.median(read), len(read), twin) if read else None


def _plain(hardware: Hardware, config: Config, evidence: Evidence, own: bool, regime: str) -> Guess | None:
    """The figure of the precision's plain form (``PLAIN``: TF32's is FP32) on the same GPU, where it floors
    the precision's: a device-bound step that no device of the part measured at the precision itself. A
    ratio carried from another part can be off on its compute side alone: the H100's run measured AlexNet
    inference at batch 256 in TF32 at 0.43 of the model (its TF32 convolutions far from the tensor peak)
    and in FP32 at 0.81, and carried to a part whose step is its memory's that made TF32 0.54-0.80x FP32 on
    an A10, L4, L40S, RTX 4090 or RTX 6000 Ada, which move the same bytes there on a matrix unit no slower.
    A part's own measurements stand: at batch 1 and in a few host-heavy small networks (ResNet-20, FCN)
    the runs measured TF32 slower than FP32, and the floor is not applied where the part measured it."""
    plain = PLAIN.get(config.precision)
    if plain is None or own or regime != "device":
        return None
    return Modelled.estimate(hardware, replace(config, precision=plain), evidence)


def _modelled(hardware: Hardware, config: Config, evidence: Evidence) -> Guess | None:
    assert hardware.spec is not None
    if _why_not(hardware, config, evidence) is not None:
        return None
    modelled = _predict(hardware, config, evidence)
    if modelled is None:
        return None
    kind = modelled.band_kind
    floor_pct = 0.0  # a floor's band (``_plain``), where one sets the figure
    twin_read = None  # this GPU's power reading at the twin precision (``_twin_read``)
    by_twin = False  # whether the twin's measurements calibrate the figure
    if config.source == LAB:
        vendor, part = hardware.spec.vendor, hardware.spec.id
        step = (modelled.breakdown.host_s, modelled.breakdown.device_s)

        def measured_at(precision: Precision) -> LabCorrection | None:
            unit = matrix_unit(hardware.spec, precision) if hardware.spec is not None else None
            return lab_correction(
                config.runtime, precision, hardware.ref.kind, evidence, config.batch_size, vendor, part, step, unit
            )

        own = measured_at(config.precision)
        at_twin = _twin(config.precision, kind, own, measured_at, modelled.regime)
        correction = at_twin if at_twin is not None else own
        by_twin = at_twin is not None
        factor, references = (correction.factor, correction.references) if correction is not None else (1.0, ())
        far = correction is not None and correction.beyond
        unit = matrix_unit(hardware.spec, config.precision)
        band = _band(kind, config.runtime, correction, modelled.regime, not hardware.ref.owned, unit)
        calibrated_by = _calibrated_by(references)
        if not references and lab_levels.levelled(kind, config.runtime, unit):
            calibrated_by = LAB_LEVEL
        language = None if correction is not None else _language_model(hardware, config, evidence, modelled)
        if language is not None:
            factor, band, product_threads = language
            calibrated_by = LANGUAGE_RUNS + (f"; {fewer_threads(product_threads)}" if product_threads else "")
        elif modelled.breakdown.product_threads:  # a zoo step's few-row linear layers (model.few_row_shares)
            calibrated_by += f"; {fewer_threads(modelled.breakdown.product_threads)}"
        if at_twin is not None:
            # fp16 from bf16 measurements (or back): the twin's own band, whatever the batch
            band = max(band, _regime_band(f"{kind}-twin", modelled.regime, f"{kind}-transfer", kind))
            asked = config.precision.value
            if own is None:
                said = f"nothing measured {asked}"
            elif own.reach > at_twin.reach:
                said = f"{asked} measured only farther from batch {config.batch_size}"
            else:
                said = f"{asked} measured as far on fewer machines, and the host bounds this step"
            calibrated_by += f" at {TWINS[config.precision].value} ({said}: the same tensor units)"
        if kind == "gpu":  # this part's own reading at the twin, whatever calibrates the figure
            twin_read = _twin_read(hardware, config, evidence)
        own_part = correction is not None and correction.own
        plain = _plain(hardware, config, evidence, own_part, modelled.regime) if kind == "gpu" else None
        if plain is not None and plain.throughput_samples_per_s > modelled.throughput * factor:
            # never below the plain form's figure on the same part: its factor, references and band at least
            factor = plain.throughput_samples_per_s / modelled.throughput
            references = tuple(sorted({*references, *plain.references}))
            floor_pct = plain.error_pct
            calibrated_by += (
                f"; no slower than its {PLAIN[config.precision].value} figure (the same bytes on a matrix unit"
                f" no slower; {config.precision.value} not measured on this part)"
            )
    else:
        stack = calibration().stacks.get(group_of(config.source, evidence.workload, evidence.task, config.precision))
        if stack is None:
            return None
        factor, band, calibrated_by = 1.0 / stack, band_of(kind), f"{config.source} (stack x{1 / stack:.2f})"
        references, far = (), False
    throughput = modelled.throughput * factor
    error_pct = max(MIN_MODELLED_PCT, as_pct(band), floor_pct)
    b = modelled.breakdown
    seconds = b.seconds / factor  # one request's: a throughput mode runs several at once
    power: float | None
    basis: PowerBasis | None
    if twin_read is not None:
        power, count, twin = twin_read
        figures = {"power_w": power, "readings": count, "twin": twin.value, "calibrates": by_twin}
        basis, power_reasons = PowerBasis.transferred, [Why(ReasonCode.power_twin, figures)]
    else:
        power, basis, power_reasons = modelled_draw(hardware.spec, b, factor)
    # the probe's bounds the figure runs into: its precision's peak's, and fp32's (its vector work)
    probed = bounded(hardware.spec, ("peak_fp32_tflops", peak_field(config.precision)))
    why = Why(
        ReasonCode.modelled,
        {
            "workload": evidence.workload,
            "bound": b.bound,
            # the step's parts as calibrated, like the step: each scaled by the same factor
            "compute_ms": b.compute_s * 1000 / factor,
            "memory_ms": b.memory_s * 1000 / factor,
            "streamed_ms": b.streamed_s * 1000 / factor,
            "host_ms": b.host_s * 1000 / factor,
            "step_ms": seconds * 1000,
            "calibrated_by": calibrated_by,
            "factor": factor,
            "error_pct": error_pct,
            "beyond": int(far),  # 1: far beyond the batches measured (a band of its own)
            **({"probed": "; ".join(probed)} if probed else {}),
        },
    )
    reasons = [why, *power_reasons]
    if config.source == LAB and not references and kind == "gpu" and dispatch_of(config.runtime) == "graph":
        reasons.append(graph_uncalibrated(config.runtime))
    return Guess(
        kind=EstimateKind.predicted,
        # the lab's stack with no lab device of the kind to calibrate it is the model on specs alone
        source=config.source if config.source != LAB else _source_of(references),
        throughput_samples_per_s=throughput,
        error_pct=error_pct,
        latency_p99_ms=seconds * 1000,
        power_w=power,
        power_basis=basis,
        why=reasons,
        memory_gb=modelled.memory_bytes / 1e9,
        references=list(references),
    )
