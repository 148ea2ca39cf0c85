"""Tests of tests/detection/inference."""
