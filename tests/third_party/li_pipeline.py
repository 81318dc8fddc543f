"""An ordinary LlamaIndex GraphRAG pipeline, as its author would write it for any PropertyGraphIndex.

Nothing here knows provbench: the test installs this file as the distribution ``li-pipeline`` on a
temporary ``sys.path`` entry, and a suite names ``li_pipeline:graph_rag`` as the ``llamaindex``
system's factory.
"""

from llama_index.core.indices.property_graph import LLMSynonymRetriever, VectorContextRetriever
from llama_index.core.query_engine import RetrieverQueryEngine


def graph_retriever(index, llm, embed_model=None, top_k=3):
    """Entity vectors and LLM keyword synonyms, each with the source text of the triplets found."""
    store = index.property_graph_store
    return index.as_retriever(
        sub_retrievers=[
            VectorContextRetriever(
                store, embed_model=embed_model, similarity_top_k=top_k, path_depth=1, include_text=True
            ),
            LLMSynonymRetriever(store, llm=llm, max_keywords=5, path_depth=1, include_text=True),
        ]
    )


def graph_rag(index, llm, embed_model=None, top_k=3):
    """The retriever above, answered by a query engine."""
    return RetrieverQueryEngine.from_args(graph_retriever(index, llm, embed_model, top_k), llm=llm)


def fusion_rag(index, llm, embed_model=None, top_k=3):
    """Hybrid retrieval fused by reciprocal rank: each sub-retriever returns its top nodes, fusion keeps
    the best two overall, so some retrieved nodes never reach the prompt."""
    from llama_index.core.retrievers import QueryFusionRetriever

    store = index.property_graph_store
    fused = QueryFusionRetriever(
        [
            index.as_retriever(
                sub_retrievers=[
                    VectorContextRetriever(store, embed_model=embed_model, similarity_top_k=top_k, path_depth=1)
                ]
            ),
            index.as_retriever(sub_retrievers=[LLMSynonymRetriever(store, llm=llm, max_keywords=5, path_depth=1)]),
        ],
        llm=llm,
        mode="reciprocal_rerank",
        similarity_top_k=2,
        num_queries=1,
        use_async=False,
    )
    return RetrieverQueryEngine.from_args(fused, llm=llm)
