"""Rank hardware x runtime x precision x batch for a workload under a power budget.

``evidence`` gathers what was measured (the lab's results, published ones), ``estimators`` turns it
into measured / interpolated / predicted estimates (``scaling`` transfers across hardware,
``interpolate`` along a curve, ``roofline`` from specs alone), ``power`` offers capped GPUs,
``objectives`` ranks, and ``engine`` puts it together.
"""

from app.recommender.engine import predict, recommend

__all__ = ["predict", "recommend"]
