"""The kinds of estimate, one module each, tried in their order: measured, then interpolated, then
predicted. Adding an estimator is one module here with an ``Estimator`` registered with its
``order`` (``details={"order": n}``); ``estimate`` tries them all, lowest order first, after
``prepare`` has let each do the work it shares across a table's pairs at once."""

from app.recommender.estimators.base import Config, Estimator, Evidence, config_at, estimate, estimators, prepare

__all__ = ["Config", "Estimator", "Evidence", "config_at", "estimate", "estimators", "prepare"]
