"""Pinecone (serverless and pod-based), read through the official ``pinecone`` SDK."""
