"""commands/check_index/stream."""
