"""Does the model fit on a device, and if not over how many: from the workload's profile.

A step needs the weights, the activations at its batch and, in training, the gradients and the
optimiser state (app/perfmodel/profile.py ``Memory``). When one device cannot hold that, the
model's state is split over ``shards`` devices and each keeps its own activations:

- training: weights, gradients and optimiser state sharded over the data-parallel devices
  (ZeRO-3 / FSDP), per device state / shards + activations at the batch;
- inference: the layers split into a pipeline of ``shards`` stages, per device weights / shards +
  the whole step's activations (conservative: one stage holds only its own layers' activations).

A device whose memory the catalog does not give (a CPU: the host's memory is the machine's, not
the part's) is taken to hold any model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.contracts import CustomWorkload, Precision, Task
from app.perfmodel import custom as custom_profile
from app.perfmodel.predict import profile_of
from app.perfmodel.profile import Memory


def footprint(workload: str, custom: CustomWorkload | None, task: Task, precision: Precision) -> Memory | None:
    """The step's memory of a zoo workload (its shipped profile) or a custom one; None without a profile."""
    if custom is not None:
        return custom_profile.profile(custom, precision, task).memory
    found = profile_of(workload, task, precision)
    return found.memory if found is not None else None


def state_bytes(memory: Memory) -> float:
    """What sharding splits: weights, gradients and optimiser state."""
    return memory.weights + memory.gradients + memory.optimizer_state


@dataclass(frozen=True, slots=True)
class Fit:
    shards: int
    """Devices one copy of the model is spread over (1: every device holds all of it)."""
    per_device_bytes: float
    whole_bytes: float
    """What one device would need unsharded."""


def fewest(memory: Memory, batch: int, capacity_bytes: float | None, max_devices: int) -> Fit | None:
    """The fewest shards that make the step fit in ``capacity_bytes`` per device; None when no
    number up to ``max_devices`` does (the activations alone are too large, or the state is)."""
    whole = memory.at(batch)
    if capacity_bytes is None or whole <= capacity_bytes:
        return Fit(1, whole, whole)
    room = capacity_bytes - memory.activations.at(batch)
    state = state_bytes(memory)
    if room <= 0 or state <= 0:
        return None
    shards = math.ceil(state / room)
    if shards > max_devices:
        return None
    return Fit(shards, per_device(memory, batch, shards), whole)


def per_device(memory: Memory, batch: int, shards: int) -> float:
    return state_bytes(memory) / shards + memory.activations.at(batch)
