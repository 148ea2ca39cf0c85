"""Tests of tests/detection/scoring."""
