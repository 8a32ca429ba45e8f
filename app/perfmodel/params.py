"""The calibrated parameters, shipped as data (app/perfmodel/data/params.json).

scripts/calibrate_perfmodel.py writes the file from the published results shipped with the
package (and the lab results it is given); benchmarks/accuracy.py measures how good they are. The
file holds, per kind of device, the model's parameters, eager kernel factor, autograd factor and
eager stream rate, each source's stack factor, each source family's traffic factors, and the bands
(absolute log errors at 90% coverage) that leave-one-part-out and the reference runs gave each kind of estimate.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field

from app.perfmodel.calibrate import PRIORS
from app.perfmodel.model import PARAMETERS, Params


class Calibration(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    generated_by: str = "scripts/calibrate_perfmodel.py"
    params: dict[str, dict[str, float]] = Field(description="Per kind (gpu, cpu): parameter -> value.")
    stacks: dict[str, float] = Field(default_factory=dict, description="source/workload/task -> stack factor.")
    traffic: dict[str, float] = Field(
        default_factory=dict, description="source family/workload/task/precision -> traffic factor."
    )
    bands: dict[str, float] = Field(
        default_factory=dict,
        description="Kind of estimate -> absolute log error at 90% coverage (leave one part out).",
    )
    observations: dict[str, int] = Field(default_factory=dict, description="What each kind was calibrated on.")
    eager_kernel: dict[str, float] = Field(
        default_factory=dict,
        description="Per kind: eager PyTorch's GEMMs' efficiency relative to a graph runtime's "
        "(app/perfmodel/runtime_pairs.py); 1 where absent.",
    )
    eager_conv: dict[str, float] = Field(
        default_factory=dict,
        description="Per kind: eager PyTorch's convolutions' efficiency relative to a graph runtime's "
        "(app/perfmodel/runtime_pairs.py); the GEMMs' where absent.",
    )
    eager_conv_tile: dict[str, float] = Field(
        default_factory=dict,
        description="Per kind: eager_conv where the precision runs on a CPU's tile units (AMX), measured on the lab "
        "CPUs' pairs at such a precision; eager_conv where absent.",
    )
    eager_kernel_tile: dict[str, float] = Field(
        default_factory=dict,
        description="Per kind: eager_kernel where the precision runs on a CPU's tile units (AMX); eager_kernel "
        "where absent.",
    )
    autograd: dict[str, float] = Field(
        default_factory=dict,
        description="Per kind: eager PyTorch training's host cost per operator over inference's, measured on "
        "hwadvisor's reference runs (app/perfmodel/host.py); 1 where absent.",
    )
    stream: dict[str, float] = Field(
        default_factory=dict,
        description="Per kind: the eager stream rate, bytes per SM per clock an eager PyTorch kernel moves at most, "
        "measured on hwadvisor's reference runs (app/perfmodel/stream.py); no limit where absent.",
    )
    fitted_dispatch: dict[str, float] = Field(
        default_factory=dict,
        description="Per kind whose ``dispatch_eager_s`` the reference runs measured (app/perfmodel/host.py): "
        "what the fit on published results alone had given it, for the record.",
    )

    def of(self, kind: str) -> Params:
        """The kind's parameters; one the file lacks (a calibration older than the model) is its prior."""
        fitted = self.params.get(kind, {})
        values = {p: fitted.get(p, PRIORS[kind][p][0]) for p in PARAMETERS}
        return Params(
            kind,
            values,
            eager_kernel=self.eager_kernel.get(kind, 1.0),
            eager_conv=self.eager_conv.get(kind, self.eager_kernel.get(kind, 1.0)),
            eager_conv_tile=self.eager_conv_tile.get(kind),
            eager_kernel_tile=self.eager_kernel_tile.get(kind),
            autograd=self.autograd.get(kind, 1.0),
            stream=self.stream.get(kind, 0.0),
        )


@lru_cache(maxsize=1)
def shipped() -> Calibration:
    """The shipped calibration; the priors alone (and no bands) when none was built."""
    path = resources.files("app.perfmodel").joinpath("data/params.json")
    if not path.is_file():
        return Calibration(params={})
    return Calibration.model_validate(json.loads(path.read_text(encoding="utf-8")))
