"""What every track shares: errors and exit codes, atomic writes, params loading, manifests and
their verification, CSV tables, counts, images, parallel map, PNG settings, flushing the standard streams."""
