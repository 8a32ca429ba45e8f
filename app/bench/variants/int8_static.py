"""int8-static: static post-training quantisation, weights and activations in int8.

The scales of the activations are fixed ahead of time from calibration inputs (random inputs drawn
like the workload's, since no data set is reachable), where an int8 model without a variant is the
runtime's dynamic quantisation (int8 weights; activations quantised per batch as it runs). Who
quantises: ONNX Runtime (``quantize_static``, QDQ format), OpenVINO (NNCF ``quantize``) and LiteRT
(the converter's full-integer mode); each runtime names the quantisation kinds it takes.
"""

from __future__ import annotations

from app.bench.variants.base import QuantisationVariant, VariantInfo, VariantKind, variants

CALIBRATION_SAMPLES = 8
"""Random mini-batches of one sample the quantisers calibrate on (every runtime the same number)."""


@variants.register
class Int8Static(QuantisationVariant):
    info = VariantInfo(
        name="int8-static",
        description=(
            "static post-training int8: weights and activations int8, activation scales calibrated on "
            f"{CALIBRATION_SAMPLES} random inputs (ONNX Runtime QDQ, OpenVINO NNCF, LiteRT full-integer)"
        ),
        kind=VariantKind.quantisation,
        tasks=("infer",),
        precisions=("int8",),
    )
