"""The performance model: what a workload computes (its profile) and what a device can do (its
catalog entry), turned into a step time, a power draw and a band that were checked against data.

Pure numpy and pydantic: the server predicts from the shipped profiles (app/perfmodel/data/) and
never needs torch. Profiles are made by app/bench/profiling.py (torch) and scripts/build_profiles.py.
"""
