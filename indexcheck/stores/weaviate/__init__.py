"""Weaviate (v4: REST schema, gRPC search), read through the official ``weaviate-client``."""
