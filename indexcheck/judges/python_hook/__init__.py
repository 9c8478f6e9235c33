"""judges/python_hook."""
