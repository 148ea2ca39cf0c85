"""Tests of tests/lots."""
