"""indexcheck test suite."""
