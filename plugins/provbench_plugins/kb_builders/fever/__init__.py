"""The fever-wiki knowledge base: FEVER Wikipedia pages as sentences, pages and hyperlinks."""
