"""stores/mongodb."""
