"""The kinds of estimate, one module each, tried in their order: measured, then interpolated, then
predicted. Adding an estimator is one module here with an ``Estimator`` registered with its
``order`` (``details={"order": n}``); ``estimate`` tries them all, lowest order first;
``estimate_all`` does the same for a table's pairs, estimator by estimator, after letting each
``prepare`` the work it shares across the pairs left to it."""

from app.recommender.estimators.base import (
    Config,
    Estimator,
    Evidence,
    config_at,
    estimate,
    estimate_all,
    estimators,
)

__all__ = ["Config", "Estimator", "Evidence", "config_at", "estimate", "estimate_all", "estimators"]
