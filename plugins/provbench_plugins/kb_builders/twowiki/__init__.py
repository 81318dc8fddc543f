"""The 2WikiMultiHopQA knowledge base of paper 000 (paragraphs, gold triples, extraction, communities)."""
