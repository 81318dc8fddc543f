"""provbench's built-in plugins. Each module is an ordinary pluggy plugin: it implements
hooks from ``provbench.hookspecs`` exactly as a third-party package would."""
