"""Rank hardware x runtime x precision x batch for a workload under a power budget.

``evidence`` gathers what was measured (the lab's results, published ones), ``estimators`` turns it
into measured / interpolated / predicted estimates (``scaling`` transfers across hardware,
``interpolate`` along a curve, ``roofline`` from specs alone, each a ``guess`` until listed),
``space`` says which configs to estimate on which hardware, ``ranking`` applies the constraints
(``power`` offers capped GPUs) and ranks by the ``objectives`` registry, and ``engine`` puts it together.
"""

from app.recommender.engine import predict, recommend

__all__ = ["predict", "recommend"]
