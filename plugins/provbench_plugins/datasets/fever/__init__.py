"""FEVER: claims, Wikipedia pages and the official scoring."""
