"""The bridge's version (a module of its own: importable even where the package is a namespace)."""

__version__ = "0.1.0"
