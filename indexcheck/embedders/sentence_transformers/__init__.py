"""embedders/sentence_transformers."""
