"""embedders/minilm."""
