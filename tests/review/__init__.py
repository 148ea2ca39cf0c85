"""Tests of tests/review."""
