"""Strata as an MCP server: assistants and agent frameworks search, read and cite a knowledge base.

``strata mcp`` serves it over stdio (or ``--http HOST:PORT``); see docs/mcp.md for the tools and a client
configuration.

Example::

    from kg.app.client import Strata
    from kg.app.mcp import KnowledgeBasePool, McpSettings, create_server

    settings = McpSettings(default_kb="demo")
    pool = KnowledgeBasePool(lambda name: Strata.connect(kb=name), settings)
    server = create_server(pool, settings)      # an mcp.server.mcpserver.MCPServer
"""

from kg.app.mcp.server import (
    READ_TOOLS,
    WRITE_TOOLS,
    BearerAuth,
    KnowledgeBasePool,
    McpSettings,
    UnknownKnowledgeBase,
    create_server,
    http_app,
)

__all__ = [
    "READ_TOOLS", "WRITE_TOOLS", "BearerAuth", "KnowledgeBasePool", "McpSettings", "UnknownKnowledgeBase",
    "create_server", "http_app",
]
