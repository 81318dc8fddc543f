"""Building blocks for knowledge-base builders (paper 000's 2Wiki builder is built from them).

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
progress       transient progress bars for LLM calls and embedding (terminal only)
options        :class:`options.CommonBuildOptions`: the options every builder shares
buildinfo      input fingerprint, reuse of a finished KB, ``build_info.json`` layout and problems
============== ===================================================================================

A new builder (see ``twowiki/builder.py``, about 150 lines) does:

1. parse its options (a subclass of ``CommonBuildOptions``) and compute ``buildinfo.fingerprint``;
   return ``buildinfo.reuse_existing(...)`` when it is not None;
2. make a ``chunking.Corpus`` of its documents and ``chunk_documents`` it;
3. add seed entities/relations to a ``graph.Graph`` (e.g. gold triples), then
   ``extraction.extract_into`` the text units it chooses (``choose_extraction_units`` ranks them);
4. ``graph.link_mentions``, write ``graph.to_records`` into ``KnowledgeBase.create(kb_dir)``;
5. ``communities.summarize_communities``; then ``kb.finalize(buildinfo.standard_info(...))``
   (``paper=`` the published counts it follows, so ``kb info`` prints them side by side).
"""
