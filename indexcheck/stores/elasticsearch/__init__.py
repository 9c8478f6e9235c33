"""stores/elasticsearch."""
