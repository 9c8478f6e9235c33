"""stores/opensearch."""
