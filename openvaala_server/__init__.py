"""OpenVaala: a local runtime daemon for AI agents."""

__version__ = "0.1.0"
