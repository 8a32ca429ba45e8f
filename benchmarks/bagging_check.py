"""Leave one GPU out with the model averaged over fits on random subsets of the other GPUs (bagging),
beside the one fit on all of them, in one run: whether the fit's dependence on which parts it saw is
what leave one GPU out pays for.

    .venv/bin/python -m benchmarks.bagging_check [--bags 16] [--drop 6] [--seed 0]

For each Lambda 2024 GPU held out, the model is fitted on every other part (what
`benchmarks.accuracy` reports) and, ``--bags`` times, on the other parts less ``--drop`` drawn at
random; the bagged prediction is the geometric mean of the bags'. Prints each part's mean absolute
error both ways and the totals. Session 33 tried it and did not adopt it (docs/ACCURACY.md).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics

from app.perfmodel.calibrate import fit, predict
from app.perfmodel.observations import from_public, median_per_part
from benchmarks.accuracy import GPU_SOURCES, LAMBDA_2024, _catalog, _profile, _public


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bags", type=int, default=16)
    parser.add_argument("--drop", type=int, default=6, help="parts left out of each bag's fit")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    observations = median_per_part(from_public(_public(GPU_SOURCES), _catalog(), _profile))
    gpus = [o for o in observations if o.device.kind == "gpu"]
    held_parts = sorted({o.device.id for o in gpus if LAMBDA_2024 in o.label})
    plain: list[float] = []
    bagged: list[float] = []
    for part in held_parts:
        rest = [o for o in gpus if o.device.id != part]
        held = [o for o in gpus if o.device.id == part and LAMBDA_2024 in o.label]
        one = predict(fit(rest, "gpu"), held)
        others = sorted({o.device.id for o in rest})
        logs: list[list[float]] = []
        for _ in range(args.bags):
            dropped = set(rng.sample(others, args.drop))
            bag = fit([o for o in rest if o.device.id not in dropped], "gpu")
            logs.append([math.log(p) for p in predict(bag, held)])
        mine_plain = [abs(p / o.throughput - 1) for p, o in zip(one, held, strict=True)]
        mine_bagged = [
            abs(math.exp(statistics.mean(b[i] for b in logs)) / o.throughput - 1) for i, o in enumerate(held)
        ]
        plain += mine_plain
        bagged += mine_bagged
        print(f"{part}: one fit {statistics.mean(mine_plain):.1%}, bagged {statistics.mean(mine_bagged):.1%}")
    one, averaged = statistics.mean(plain), statistics.mean(bagged)
    print(f"mean abs error over {len(plain)} cells: one fit {one:.1%}, bagged {averaged:.1%}")


if __name__ == "__main__":
    main()
