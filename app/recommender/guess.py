"""An estimate while the recommender works: plain numbers, made into the validated wire ``Estimate``
only for what the answer lists. A fleet of 1,000 machines gives tens of thousands of candidates;
most are ranked and dropped, and their one-line explanations are never written."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from app.contracts import Estimate, EstimateKind, PowerBasis


@dataclass(slots=True)
class Guess:
    kind: EstimateKind
    source: str
    throughput_samples_per_s: float
    error_pct: float
    latency_p99_ms: float | None
    power_w: float | None
    power_basis: PowerBasis | None
    explain: str | Callable[[], str]
    references: list[str] = field(default_factory=list)
    power_cap_w: float | None = None

    @property
    def explanation(self) -> str:
        return self.explain if isinstance(self.explain, str) else self.explain()

    @property
    def throughput_low(self) -> float:
        return max(0.0, self.throughput_samples_per_s * (1 - self.error_pct / 100))

    @property
    def throughput_high(self) -> float:
        return self.throughput_samples_per_s * (1 + self.error_pct / 100)

    def to_contract(self) -> Estimate:
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
            references=self.references,
            explanation=self.explanation,
        )
