"""An estimate while the recommender works: plain numbers, made into the validated wire ``Estimate``
only for what the answer lists. A fleet of 1,000 machines gives tens of thousands of candidates;
most are ranked and dropped, and their reasons are never made or written (``why`` may be a function)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from app.contracts import Estimate, EstimateKind, PowerBasis
from app.contracts.recommend import MAX_REFERENCES
from app.recommender import reasons
from app.recommender.reasons import Why


@dataclass(slots=True)
class Guess:
    kind: EstimateKind
    source: str
    throughput_samples_per_s: float
    error_pct: float
    latency_p99_ms: float | None
    power_w: float | None
    power_basis: PowerBasis | None
    why: list[Why] | Callable[[], list[Why]]
    references: list[str] = field(default_factory=list)
    power_cap_w: float | None = None
    memory_gb: float | None = None
    """What the config needs on the device (weights and activations, a language model's KV cache, and in
    training gradients and optimiser state), when modelled."""

    @property
    def reasons(self) -> list[Why]:
        return self.why if isinstance(self.why, list) else self.why()

    @property
    def explanation(self) -> str:
        return reasons.explanation(self.reasons)

    @property
    def throughput_low(self) -> float:
        """The band is symmetric in ratio, as the model's bands are calibrated (a quantile of absolute
        log errors, app/perfmodel/bands.py): t / (1 + e) .. t x (1 + e). For a measurement's few
        percent this is its CI; a wide band's low side is not cut to t x (1 - e), which at e = 65%
        claimed 0.35 t where the calibration said 0.61 t."""
        return self.throughput_samples_per_s / (1 + self.error_pct / 100)

    @property
    def throughput_high(self) -> float:
        return self.throughput_samples_per_s * (1 + self.error_pct / 100)

    def to_contract(self) -> Estimate:
        why = self.reasons
        return Estimate(
            kind=self.kind,
            source=self.source,
            throughput_samples_per_s=self.throughput_samples_per_s,
            throughput_low=self.throughput_low,
            throughput_high=self.throughput_high,
            error_pct=self.error_pct,
            latency_p99_ms=self.latency_p99_ms,
            power_w=self.power_w,
            power_basis=self.power_basis,
            power_cap_w=self.power_cap_w,
            memory_gb=self.memory_gb,
            references=self.references[:MAX_REFERENCES],
            references_total=len(self.references),
            explanation=reasons.explanation(why),
            why=[reasons.to_reason(w) for w in why],
        )
