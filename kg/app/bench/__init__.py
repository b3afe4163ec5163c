"""Benchmarks behind ``strata bench ...``: each prints JSON; speed is measured here, never asserted in tests."""

__all__: list[str] = []
