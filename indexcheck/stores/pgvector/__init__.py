"""stores/pgvector."""
