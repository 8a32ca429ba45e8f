"""How many devices, does it fit, how long and what it costs: a plan for each candidate.

``memory`` decides how many devices must share the model for it to fit, ``scale`` how the devices'
throughput adds up (the data-parallel scaling model of app/perfmodel/scaling.py for training),
``costs`` prices ownership over a period, a training job and a cloud rental, and ``engine`` takes
every option the recommender estimated to the fewest devices that reach the target and ranks them.
``serving`` plans a language model's serving: tensor parallelism, TTFT, TPOT, tokens/s and $ per
million tokens for each part, from app/perfmodel/generation.py.
"""

from app.planner.engine import plan

__all__ = ["plan"]
