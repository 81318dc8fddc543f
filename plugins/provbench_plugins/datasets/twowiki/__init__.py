"""2WikiMultiHopQA: the official formats, paper 000's question selection, the official scoring."""
