"""indexcheck with the frameworks people build RAG pipelines with.

- ``diagnose --system`` adapters: :mod:`.langchain_system` (a LangChain retriever and chain)
  and :mod:`.llamaindex_system` (a LlamaIndex query engine).
- The embedding classes for building an index with the model indexcheck re-creates live in
  :mod:`indexcheck.embedders.frameworks`; ``indexcheck.integrations.langchain`` and
  ``indexcheck.integrations.llamaindex`` name them too.
"""
