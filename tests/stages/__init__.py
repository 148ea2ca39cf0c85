"""Tests of tests/stages."""
