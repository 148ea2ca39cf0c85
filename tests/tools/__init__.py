"""Tests of tests/tools."""
