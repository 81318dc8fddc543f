"""Errors meant for the person running provbench: the CLI prints them as one clear line."""


class UserError(Exception):
    """Bad input (suite, dataset, plugin name, knowledge base path): say what and where."""
