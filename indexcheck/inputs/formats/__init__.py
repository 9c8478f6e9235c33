"""Readers for index layouts written by frameworks (LlamaIndex, ...), independent of stores.

Each module turns a framework's files into ids, vectors and the texts that were embedded;
the stores in ``indexcheck/stores`` open them behind a scheme.
"""
