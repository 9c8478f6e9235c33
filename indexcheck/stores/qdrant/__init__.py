"""stores/qdrant."""
