"""Statistics over independent units: rates with Wilson intervals, exact McNemar on paired
outcome tables, the stats file, the predeclared release gate, the report, revision comparison."""
