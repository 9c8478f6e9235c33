"""scales."""
