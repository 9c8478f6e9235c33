"""indexcheck's embedders for the frameworks people index with.

Build the index with exactly the model indexcheck re-creates, so ``check-index`` with the
same ``--embedder`` compares like with like::

    from indexcheck.integrations.langchain import IndexcheckEmbeddings   # LangChain
    from indexcheck.integrations.llamaindex import IndexcheckEmbedding   # LlamaIndex

Both take an embedder spec (``"minilm"``, the default; ``"st:NAME"``,
``"mistral"``, ``"py:module:function"``, with ``?prefix=``/``&query_prefix=``) or an opened
:class:`~indexcheck.embedders.base.Embedder`. Documents are embedded with the spec's
``prefix``, queries with its ``query_prefix``. The frameworks are imported only when a
class is first used; a missing one raises
:class:`~indexcheck.errors.MissingDependencyError` naming the ``pip install``.
"""
