"""Energy meters, one module each (see base.py)."""

from __future__ import annotations

from app.bench.energy.base import EnergyMeter, EnergyReading, Metered, NoMeter, PeakRss, Sampler, meter_for, meters

__all__ = ["EnergyMeter", "EnergyReading", "Metered", "NoMeter", "PeakRss", "Sampler", "meter_for", "meters"]
