"""indexcheck: prove a RAG vector index is right before users pay for it being wrong."""

from __future__ import annotations

__version__ = "0.1.0"
