"""`openvaala acp`: an Agent Client Protocol agent over stdio, for Zed, JetBrains IDEs, Neovim
plugins and Toad (docs/editors.md).

Like the LSP bridge it holds no conversation of its own: an ACP session is a daemon conversation
(the session id is the conversation id), every prompt is an `input/send`, and every
`session/update` is a daemon notification translated by the pure modules `tools`, `content` and
`stream`. The ACP framing, schema and connection are the `agent-client-protocol` package's.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
