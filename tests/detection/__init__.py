"""Tests of tests/detection."""
