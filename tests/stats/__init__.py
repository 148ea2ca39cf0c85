"""Tests of tests/stats."""
