"""A language model of the zoo as a GGUF file, for llama.cpp: the project's own random weights.

The Llama-style model (app/bench/models/llama.py) is built as the torch runtimes build it (seeded,
so every machine writes the same weights) and its tensors are written under llama.cpp's names with
the shape's hyperparameters (``llama.*`` keys). Linear weights are stored in the config's precision:
F32, F16, BF16, Q8_0 for int8 or Q4_0 for int4 (llama.cpp's weight-only 8 and 4 bits: blocks of 32
weights with one F16 scale, 34 and 18 bytes a block; the activations stay in floating point); norms
stay F32, as llama.cpp's converter keeps them. A tokeniser is required by the format and never used:
generation is fed token ids, so its vocabulary is placeholder pieces. The weights are random, so the
query and key projections are not permuted to llama.cpp's rotary layout (the converter does that to
keep a trained model's outputs; the work is the same). Files are cached by preset, size and precision
beside the ONNX exports.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.bench.cache import cache_root, definitions_digest, forget_stale
from app.bench.models.llama import NORM_EPS, ROPE_THETA
from app.contracts import LlmShape, Precision

if TYPE_CHECKING:
    import numpy as np
    from torch import nn

    from app.bench.workloads.base import Size
    from app.bench.workloads.llama import LlmWorkload

STORED = {
    Precision.fp32: "F32",
    Precision.fp16: "F16",
    Precision.bf16: "BF16",
    Precision.int8: "Q8_0",
    Precision.int4: "Q4_0",
}
"""The GGUF type a linear weight is stored in, per precision."""
FILE_TYPE = {Precision.fp32: 0, Precision.fp16: 1, Precision.int4: 2, Precision.int8: 7, Precision.bf16: 32}
"""llama.cpp's ``general.file_type`` (ALL_F32, MOSTLY_F16, MOSTLY_Q4_0, MOSTLY_Q8_0, MOSTLY_BF16)."""
QUANT_BLOCK = 32
"""Weights per block of Q8_0 and Q4_0: a row whose length it does not divide stays F32."""
KV_BYTES = 2
"""llama.cpp's default KV cache type is F16."""
TRAINED_CONTEXT = 131_072
"""``llama.context_length``, what Llama 3.1 publishes; a run's context is its own (n_ctx)."""


def gguf_path(workload: LlmWorkload, size: Size, precision: Precision) -> Path:
    """The workload's GGUF in ``precision``, written on first use (and kept: a 1B model in fp32 is 5 GB)."""
    suffix = "-tiny" if size == "tiny" else ""
    path = (
        cache_root() / "gguf" / f"{workload.info.name}-{definitions_digest()}{suffix}-{STORED[precision].lower()}.gguf"
    )
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as scratch:
        made = Path(scratch) / path.name
        write(workload.make(size), workload.shape(size), precision, made)
        made.replace(path)
    forget_stale(path)
    return path


def llama_names(model: nn.Module, shape: LlmShape) -> Iterator[tuple[str, str]]:
    """(llama.cpp's tensor name, the torch parameter's name) of every tensor the file holds."""
    yield "token_embd.weight", "embed_tokens.weight"
    for i in range(shape.layers):
        layer = f"layers.{i}"
        yield f"blk.{i}.attn_norm.weight", f"{layer}.input_norm.weight"
        for ours, theirs in (("q", "q_proj"), ("k", "k_proj"), ("v", "v_proj"), ("output", "o_proj")):
            yield f"blk.{i}.attn_{ours}.weight", f"{layer}.attention.{theirs}.weight"
        yield f"blk.{i}.ffn_norm.weight", f"{layer}.post_attention_norm.weight"
        for ours, theirs in (("gate", "gate_proj"), ("up", "up_proj"), ("down", "down_proj")):
            yield f"blk.{i}.ffn_{ours}.weight", f"{layer}.mlp.{theirs}.weight"
    yield "output_norm.weight", "norm.weight"
    if not shape.tied_embeddings:
        yield "output.weight", "lm_head.weight"


def write(model: nn.Module, shape: LlmShape, precision: Precision, path: Path) -> None:
    import gguf

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("hwadvisor random weights")
    writer.add_context_length(TRAINED_CONTEXT)
    writer.add_embedding_length(shape.hidden)
    writer.add_block_count(shape.layers)
    writer.add_feed_forward_length(shape.intermediate)
    writer.add_head_count(shape.heads)
    writer.add_head_count_kv(shape.kv_heads)
    writer.add_key_length(shape.dim)
    writer.add_value_length(shape.dim)
    writer.add_rope_dimension_count(shape.dim)
    writer.add_rope_freq_base(ROPE_THETA)
    writer.add_layer_norm_rms_eps(NORM_EPS)
    writer.add_file_type(FILE_TYPE[precision])
    _placeholder_tokeniser(writer, shape.vocabulary)
    weights = dict(model.named_parameters())
    for ours, theirs in llama_names(model, shape):
        _add(writer, ours, weights[theirs].detach().float().numpy(), precision)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def _add(writer: Any, name: str, array: np.ndarray, precision: Precision) -> None:
    import gguf

    stored = STORED[precision]
    quantised = stored in ("Q8_0", "Q4_0")
    if array.ndim == 1 or stored == "F32" or (quantised and array.shape[-1] % QUANT_BLOCK):
        writer.add_tensor(name, array.astype("float32"))
    elif stored == "F16":
        writer.add_tensor(name, array.astype("float16"))
    else:
        kind = gguf.GGMLQuantizationType[stored]
        packed = gguf.quants.quantize(array, kind)
        writer.add_tensor(name, packed, raw_shape=packed.shape, raw_dtype=kind)


def _placeholder_tokeniser(writer: Any, vocabulary: int) -> None:
    """The format needs a vocabulary; generation here is fed token ids, so none of it is ever read."""
    special = [b"<unk>", b"<s>", b"</s>"]
    pieces = special + [f"<{i}>".encode() for i in range(len(special), vocabulary)]
    writer.add_tokenizer_model("llama")
    writer.add_token_list(pieces)
    writer.add_token_scores([0.0] * vocabulary)
    writer.add_token_types([2, 3, 3] + [1] * (vocabulary - len(special)))  # unknown, control, control, normal
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
