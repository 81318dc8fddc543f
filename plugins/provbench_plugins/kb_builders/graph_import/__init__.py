"""The ``property-graph`` builder: a graph the user already has (LlamaIndex property graph stores), imported."""
