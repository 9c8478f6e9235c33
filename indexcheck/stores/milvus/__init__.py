"""stores/milvus."""
