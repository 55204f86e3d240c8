"""Gold tables: what users query, derived incrementally from silver."""
