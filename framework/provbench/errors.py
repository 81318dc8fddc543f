"""Errors meant for the person running provbench: the CLI prints them as one clear line."""


class UserError(Exception):
    """Bad input (suite, dataset, plugin name, knowledge base path): say what and where."""


class PluginError(UserError):
    """A plugin could not be registered, looked up or created (bad name, type or options)."""
