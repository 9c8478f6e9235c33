"""commands/check_index/shift."""
