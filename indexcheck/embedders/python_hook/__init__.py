"""embedders/python_hook."""
