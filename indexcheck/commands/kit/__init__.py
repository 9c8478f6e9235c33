"""commands/kit."""
