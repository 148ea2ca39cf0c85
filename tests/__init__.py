"""candor's tests: one folder per package of candor/ (tests/stats/test_rates.py tests
candor_eval/stats/rates.py), stages/ and tools/; whole-repository tests at this level."""
