"""commands/judge/sheet."""
