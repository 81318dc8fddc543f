"""Building blocks for knowledge-base builders: all four built-in builders stand on them.

The 2Wiki builder (paper 000) uses every block; the FEVER (003), medical (001) and concept-graph
(002) builders, which read a graph rather than chunk and extract one, share the options base,
the LLM-call tally, reuse and build info, and the writing and finishing steps.

Each module does one job and imports nothing heavy at package import:

============== ===================================================================================
chunking       documents of sentences -> text units ``tu:<n>`` (LlamaIndex SentenceSplitter), with
               each sentence mapped to its text unit (:func:`chunking.chunk_documents`)
names          the entity merge key, ids, type choice, the generic-phrase filter
matcher        :class:`matcher.MentionMatcher`: all entity names found in a text in one
               Aho-Corasick pass (linear in the text); :func:`matcher.mention_pattern` for one name
graph          the draft graph (entities merged by name, relations deduplicated),
               :func:`graph.link_mentions` (entity <-> text unit links) and :func:`graph.to_records`
extraction     LLM extraction of entities and relations with per-text-unit caps
               (:class:`extraction.ExtractionSettings`), validated against the text
prompts        extraction and summary prompts and JSON schemas (caps as parameters)
communities    Leiden communities (flat or hierarchical, largest component or all) and their
               LLM summaries, member-list fallbacks counted
llm_calls      concurrent LLM calls in input order, :class:`llm_calls.LLMTally` accounting
               (``tally.chat``: a counted call that never ends the build; ``raise_if_all_failed``)
progress       transient progress bars for LLM calls and embedding (terminal only)
options        :class:`options.BaseBuildOptions` (every builder) and :class:`options.CommonBuildOptions`
               (builders on chunking, extraction and communities)
buildinfo      input fingerprint (``file_digests`` for file inputs), reuse of a finished KB,
               ``build_info.json`` layout and problems
writing        ``write_kb`` (a new KB with its records) and ``finish`` (duration, embedding with a
               progress bar, completion)
============== ===================================================================================

A new builder (see ``twowiki/builder.py``, about 150 lines) does:

1. parse its options (a subclass of ``CommonBuildOptions``) and compute ``buildinfo.fingerprint``;
   return ``buildinfo.reuse_existing(...)`` when it is not None;
2. make a ``chunking.Corpus`` of its documents and ``chunk_documents`` it;
3. add seed entities/relations to a ``graph.Graph`` (e.g. gold triples), then
   ``extraction.extract_into`` the text units it chooses (``choose_extraction_units`` ranks them);
4. ``graph.link_mentions``, then ``writing.write_kb(kb_dir, *graph.to_records(...))``;
5. ``communities.summarize_communities``; ``tally.raise_if_all_failed``; then
   ``writing.finish(kb, buildinfo.standard_info(...), started)`` (``paper=`` the published
   counts it follows, so ``kb info`` prints them side by side).

The KB build lock is not a builder's business: ``provbench.plugin_api.KBBuilder`` takes it
around every ``build``.
"""
