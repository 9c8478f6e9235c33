"""integrations/langchain."""
