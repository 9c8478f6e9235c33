"""stores/lancedb."""
