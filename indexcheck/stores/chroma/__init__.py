"""stores/chroma."""
