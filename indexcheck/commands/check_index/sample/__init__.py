"""commands/check_index/sample."""
