"""What a buyer asks the planner and what it answers: how many devices reach a target, whether the
model fits, how long a training job takes and what owning (or renting) the devices costs.

A plan is a recommendation with the device count left open: every candidate hardware x runtime x
precision x batch is taken to the fewest devices that hold the model and reach the target, and
priced over an ownership period. Field names carry their units; ``Plan.assumptions`` lists every
default the figures rest on, so a procurement tool can show them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, model_validator

from app.contracts.catalog import Price
from app.contracts.common import (
    AllowedDeviceKinds,
    AllowedPrecisions,
    AllowedRuntimes,
    Name,
    NonNegative,
    Positive,
    Precision,
    Strict,
    Task,
)
from app.contracts.recommend import Answer, CustomWorkload, Estimate, HardwareRef, Reason, Scope

CatalogId = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[a-z0-9][a-z0-9_.\-]*$")]


class PlanObjective(StrEnum):
    cheapest = "cheapest"
    """Lowest total cost of ownership over the period: purchase, energy and hosting."""
    fastest = "fastest"
    """Highest throughput of all devices together (a training job: shortest time to train)."""
    least_energy = "least_energy"
    """Fewest joules per sample (a training job: fewest kWh for the job)."""


class TrainingJob(Strict):
    """A training run to finish: ``dataset_samples`` x ``epochs`` samples, within ``deadline_hours``."""

    dataset_samples: int = Field(ge=1, le=10**13, description="Samples in one epoch (ImageNet-1k: 1,281,167).")
    epochs: float = Field(default=1.0, gt=0, le=100_000)
    deadline_hours: Positive | None = Field(default=None, le=1_000_000, description="Unset: no deadline.")

    @property
    def samples(self) -> float:
        """Samples the job trains on: every epoch's."""
        return self.dataset_samples * self.epochs

    def hours_at(self, samples_per_s: float) -> float:
        """Hours the job takes at ``samples_per_s``."""
        return self.samples / samples_per_s / 3600


class Serving(Strict):
    """Inference traffic to hold: requests of one sample each, at ``request_rate_per_s`` in all."""

    request_rate_per_s: Positive = Field(le=1e9)
    latency_p99_slo_ms: Positive | None = Field(default=None, le=3_600_000)


class Target(Strict):
    """What the devices must reach together; at most one. None of them: the fewest devices that hold the model."""

    throughput_samples_per_s: Positive | None = Field(default=None, le=1e12)
    job: TrainingJob | None = None
    serving: Serving | None = None

    @model_validator(mode="after")
    def _at_most_one(self) -> Target:
        given = [n for n in ("throughput_samples_per_s", "job", "serving") if getattr(self, n) is not None]
        if len(given) > 1:
            raise ValueError(f"give at most one target, not {' and '.join(given)}")
        return self


class Costs(Strict):
    """What owning and running costs, per unit; the defaults are listed in ``Plan.assumptions``."""

    period_years: float = Field(default=3.0, ge=0.1, le=20, description="The ownership period the totals cover.")
    electricity_usd_per_kwh: NonNegative = Field(default=0.15, le=10)
    utilisation: float = Field(
        default=1.0,
        ge=0.001,
        le=1,
        description="Share of the period the devices run (energy, hosting is paid anyway); at least 0.1%.",
    )
    hosting_usd_per_kw_year: NonNegative = Field(
        default=0.0, le=1_000_000, description="Rack space, cooling and power delivery per kW of system power."
    )
    system_usd: NonNegative = Field(
        default=0.0, le=10_000_000, description="Per system on top of its devices: chassis, CPUs, memory, network."
    )
    cloud_usd_per_device_hour: dict[CatalogId, Annotated[Positive, Field(le=100_000)]] = Field(
        default_factory=dict,
        max_length=1000,
        description="Rental price of one device per hour, by catalog id: a cloud comparison for those parts.",
    )


class Cluster(Strict):
    """How devices are put together when one is not enough: as said here, or as a declared cluster."""

    declared: Name | None = Field(
        default=None,
        description="A declared cluster (POST /api/v1/clusters): its network and devices per system replace "
        "network_gb_s and devices_per_system, and with scope 'owned' its devices bound max_devices.",
    )
    devices_per_system: int = Field(default=8, ge=1, le=64, description="Devices one server holds.")
    network_gb_s: Positive = Field(
        default=25.0, le=10_000, description="Per device and direction between systems (25 GB/s: 200 Gb/s InfiniBand)."
    )
    max_devices: int = Field(default=64, ge=1, le=100_000, description="No plan uses more devices than this.")

    @model_validator(mode="after")
    def _declared_or_described(self) -> Cluster:
        given = {"devices_per_system", "network_gb_s"} & self.model_fields_set
        if self.declared is not None and given:
            raise ValueError(
                f"give either declared (the cluster's own figures) or {' and '.join(sorted(given))}, not both"
            )
        return self


class PlanRequest(Strict):
    """A workload (zoo name or custom), a target, constraints for the whole system and the costs."""

    workload: Name | None = None
    custom: CustomWorkload | None = None
    task: Task = Task.train
    batch_size: int | None = Field(default=None, ge=1, le=100_000_000, description="Per device; unset: each one's.")
    precisions: AllowedPrecisions = None
    runtimes: AllowedRuntimes = None
    device_kinds: AllowedDeviceKinds = None
    scope: Scope = Scope.catalog
    target: Target = Field(default_factory=Target)
    objective: PlanObjective = PlanObjective.cheapest
    power_budget_w: Positive | None = Field(default=None, description="Per device: a device over it is capped.")
    system_power_budget_w: Positive | None = Field(default=None, description="All devices of the plan together.")
    max_price_usd: Positive | None = Field(default=None, description="Purchase of all devices and systems.")
    costs: Costs = Field(default_factory=Costs)
    cluster: Cluster = Field(default_factory=Cluster)
    limit: int = Field(default=20, ge=1, le=500, description="At most this many ranked plans.")

    @property
    def name(self) -> str:
        return self.workload if self.workload is not None else self.custom.name  # type: ignore[union-attr]

    @model_validator(mode="after")
    def _one_workload(self) -> PlanRequest:
        if (self.workload is None) == (self.custom is None):
            raise ValueError("give exactly one of workload (a zoo name) or custom")
        if self.target.job is not None and self.task is not Task.train:
            raise ValueError("a training job target needs task 'train'")
        if self.target.serving is not None and self.task is not Task.infer:
            raise ValueError("a serving target needs task 'infer'")
        return self


Parallelism = Literal["single", "data_parallel", "sharded_data_parallel", "replicas", "pipeline"]
"""single: one device. data_parallel: every device holds the model and its own batch, gradients
all-reduced. sharded_data_parallel: the same with weights, gradients and optimiser state split over
the devices (ZeRO-3/FSDP), for a model one device cannot hold. replicas: independent inference
copies. pipeline: inference with the layers split over a group of devices that together hold it."""


class CostBreakdown(Answer):
    """What the plan costs over ``period_years``, owned; and the same running hours rented, where priced."""

    period_years: Positive
    running_hours: NonNegative = Field(description="Hours the devices run in the period (utilisation x period).")
    purchase_usd: NonNegative | None = Field(description="Devices x price + systems x system_usd; None: no price.")
    energy_kwh: NonNegative | None = Field(description="System power x running hours; None: power unknown.")
    energy_usd: NonNegative | None
    hosting_usd: NonNegative | None
    total_usd: NonNegative | None = Field(description="purchase + energy + hosting; None without a price or power.")
    cloud_usd_per_hour: NonNegative | None = Field(default=None, description="All devices, where a rate was given.")
    cloud_usd: NonNegative | None = Field(default=None, description="running_hours x cloud_usd_per_hour.")


class JobCost(Answer):
    """One training job: its time, energy and cost owned (purchase share by the job's hours) or rented."""

    time_to_train_hours: Positive
    energy_kwh: NonNegative | None
    energy_usd: NonNegative | None
    owned_usd: NonNegative | None = Field(
        description="Energy plus the purchase and hosting spread over the period's running hours, for the job's hours."
    )
    cloud_usd: NonNegative | None = None


class CostPoint(Answer):
    month: NonNegative
    owned_usd: NonNegative | None
    cloud_usd: NonNegative | None


class PlanConfig(Answer):
    hardware: HardwareRef
    runtime: Name
    precision: Precision
    batch_size: int = Field(ge=1, description="Per device.")


class PlanCandidate(PlanConfig):
    rank: int = Field(ge=1)
    devices: int = Field(ge=1)
    systems: int = Field(ge=1)
    parallelism: Parallelism
    link: str | None = Field(description="What the devices' all-reduce or pipeline crosses, in words.")
    estimate: Estimate = Field(description="One device, as the recommender has it.")
    throughput_samples_per_s: Positive = Field(description="All devices together.")
    error_pct: NonNegative = Field(
        description="Half-width of the throughput's band, percent: one device's band and, across devices, the "
        "scaling model's out-of-sample band, combined."
    )
    scaling_efficiency: NonNegative = Field(description="throughput / (devices x one device's throughput).")
    latency_p99_ms: NonNegative | None = None
    memory_needed_gb: NonNegative | None = Field(description="Per device, after any sharding.")
    memory_gb: NonNegative | None = Field(description="What one device has.")
    power_w: NonNegative | None = Field(description="Per device.")
    system_power_w: NonNegative | None = Field(description="All devices (the systems' hosts are not counted).")
    energy_per_sample_j: NonNegative | None
    price: Price | None = Field(description="Per device.")
    costs: CostBreakdown
    job: JobCost | None = None
    cost_over_time: list[CostPoint] = Field(description="Cumulative cost by month, owned and rented.")
    notes: list[Reason] = Field(default_factory=list)


class PlanRejection(PlanConfig):
    devices: int = Field(ge=1, description="The device count the reasons are about.")
    reasons: list[Reason]


class Plan(Answer):
    query: PlanRequest
    candidates: list[PlanCandidate]
    rejected: list[PlanRejection]
    assumptions: list[str] = Field(description="Every default and model the figures rest on, in words.")
    notes: list[str] = Field(default_factory=list)
