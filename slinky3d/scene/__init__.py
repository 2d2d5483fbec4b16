"""Scene files: the specs they resolve to, loading, one validator for every table, overrides."""
