"""stores/faiss."""
