"""How well the recommender predicts GPUs it has no measurement of: leave one GPU out.

    .venv/bin/python -m benchmarks.accuracy [--markdown]

Over the Lambda 2024 single-GPU training rows shipped in the package (resnet50, bert_base_squad,
gnmt; the fp32 column, which ran TF32 on Ampere and newer, and the fp16 column), each GPU is
predicted from all the others plus the catalog's specs by exactly the code the recommender uses
(``app.recommender.scaling.transfer``), and compared with its published figure. Several systems
with the same GPU (six H100 SXM5 hosts) count as one GPU, at their median. Nothing is tuned per
GPU: the split between compute-, memory- and vector-bound time is learned from the other GPUs each
time. Also: the error when only one reference GPU is known (the band the recommender gives then).
"""

from __future__ import annotations

import argparse
import itertools
import math
import statistics
from collections import defaultdict

from app.catalog import get
from app.catalog.published import shipped
from app.contracts import Precision, Task
from app.recommender.scaling import Reference, transfer

WORKLOADS = ("resnet50", "bert_base_squad", "gnmt")
SOURCE = "public:lambda-2024"


def _columns() -> dict[tuple[str, str], dict[str, Reference]]:
    """(workload, column) -> GPU -> its median figure, at the precision it really ran."""
    values: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    precision_of: dict[tuple[str, str, str], Precision] = {}
    for r in shipped():
        if r.source != SOURCE or r.workload not in WORKLOADS or r.task is not Task.train:
            continue
        column = "fp16" if r.precision is Precision.fp16 else "fp32"
        values[(r.workload, column)][r.hardware_id].append(r.throughput_samples_per_s)
        precision_of[(r.workload, column, r.hardware_id)] = r.precision
    return {
        key: {
            gpu: Reference(gpu, get(gpu), precision_of[(key[0], key[1], gpu)], statistics.median(figures))
            for gpu, figures in gpus.items()
        }
        for key, gpus in values.items()
    }


def _ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    for rank, i in enumerate(order):
        ranks[i] = float(rank)
    return ranks


def spearman(a: list[float], b: list[float]) -> float:
    ra, rb = _ranks(a), _ranks(b)
    ma, mb = statistics.fmean(ra), statistics.fmean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb, strict=True))
    return cov / math.sqrt(sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--markdown", action="store_true", help="Print the per-GPU table as Markdown.")
    args = parser.parse_args()
    columns = _columns()
    errors: list[float] = []
    per_gpu: dict[str, dict[str, str]] = defaultdict(dict)
    correlations = []
    for (workload, column), gpus in sorted(columns.items()):
        truth, predicted = [], []
        for held, reference in gpus.items():
            others = [r for gpu, r in gpus.items() if gpu != held]
            result = transfer(others, reference.hardware, reference.precision, with_band=False)
            assert result is not None, f"{held} could not be predicted"
            error = (result.throughput - reference.throughput) / reference.throughput * 100
            errors.append(abs(error))
            truth.append(reference.throughput)
            predicted.append(result.throughput)
            per_gpu[held][f"{workload} {column}"] = f"{error:+.1f}%"
        rho = spearman(truth, predicted)
        correlations.append(rho)
        mape = statistics.fmean(abs(p - t) / t * 100 for p, t in zip(predicted, truth, strict=True))
        print(f"{workload + '/train':24} {column}: {len(gpus)} GPUs, mean abs error {mape:5.1f}%, Spearman {rho:.3f}")
    print(
        f"\nall: {len(errors)} predictions, mean abs error {statistics.fmean(errors):.1f}%, "
        f"median {statistics.median(errors):.1f}%, 90th percentile {sorted(errors)[int(0.9 * len(errors))]:.1f}%, "
        f"worst {max(errors):.1f}%, mean Spearman {statistics.fmean(correlations):.3f}"
    )
    single = []
    for gpus in columns.values():
        for a, b in itertools.permutations(gpus.values(), 2):
            result = transfer([a], b.hardware, b.precision, with_band=False)
            if result is not None:
                single.append((result.throughput - b.throughput) / b.throughput * 100)
    rms = math.sqrt(statistics.fmean(e * e for e in single))
    print(
        f"one reference GPU only: {len(single)} transfers, mean abs error "
        f"{statistics.fmean(abs(e) for e in single):.1f}%, RMS {rms:.1f}%"
    )
    if args.markdown:
        headers = sorted({h for row in per_gpu.values() for h in row})
        print("\n| GPU | " + " | ".join(headers) + " |")
        print("|---|" + "---|" * len(headers))
        for gpu in sorted(per_gpu, key=lambda g: get(g).name):
            cells = [per_gpu[gpu].get(h, "") for h in headers]
            print(f"| {get(gpu).name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
