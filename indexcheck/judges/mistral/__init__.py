"""judges/mistral."""
