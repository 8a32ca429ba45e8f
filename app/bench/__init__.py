"""The benchmark engine: workloads (model zoo), runtimes, primitives, measurement, energy, suites."""
