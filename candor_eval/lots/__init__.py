"""The lots track: golden set, answers (recorded, live, normalised), tokens, identification, field
expectations, comps, values, bid ceilings, valuation scoring and the audit comparison."""
