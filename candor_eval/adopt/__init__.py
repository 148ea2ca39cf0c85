"""Adoption: what lets a team use candor in its own repository (fingerprints, candor.lock, the scaffold)."""
