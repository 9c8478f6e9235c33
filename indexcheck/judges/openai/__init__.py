"""judges/openai."""
