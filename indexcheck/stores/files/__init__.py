"""stores/files."""
