"""stores/redis."""
