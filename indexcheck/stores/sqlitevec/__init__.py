"""stores/sqlitevec."""
