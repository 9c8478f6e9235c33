"""embedders/mistral."""
