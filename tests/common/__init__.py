"""Tests of tests/common."""
