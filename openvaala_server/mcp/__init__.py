"""MCP servers: one shared connection per configured server, and their tools as agent tools.

docs/configuration.md ("MCP servers") describes the `[mcp_servers.NAME]` tables.
"""
