"""The ``documents`` KB builder: a folder of the user's .txt, .md, .html and .pdf files."""
