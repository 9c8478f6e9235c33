"""stores/llamaindex."""
