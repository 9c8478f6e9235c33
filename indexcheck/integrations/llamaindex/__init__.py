"""integrations/llamaindex."""
