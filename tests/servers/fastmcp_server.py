"""A small FastMCP server for mcp-covenant's real-server tests.

    python fastmcp_server.py v1|v2 [stdio | http PORT | stateless PORT]

Runs under PyPI `mcp` 1.x (mcp.server.fastmcp.FastMCP) and 2.x (which renamed it
mcp.server.mcpserver.MCPServer). pydantic models make FastMCP emit `$defs`, `$ref`
and `anyOf` (Optional), the shapes real servers have. v2 carries realistic breaking
changes against v1; tests/it/real_servers.rs checks that mcp-covenant reports them.
"""

import sys
from enum import Enum
from typing import Literal, Optional

from pydantic import BaseModel, Field

try:  # mcp 2.x
    from mcp.server.mcpserver import MCPServer as Server

    MCP2 = True
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server

    MCP2 = False

VERSION = sys.argv[1] if len(sys.argv) > 1 else "v1"
MODE = sys.argv[2] if len(sys.argv) > 2 else "stdio"
PORT = int(sys.argv[3]) if len(sys.argv) > 3 else 8765
V2 = VERSION == "v2"

if V2:
    class Priority(str, Enum):  # "low" is gone: callers sending it now fail
        medium = "medium"
        high = "high"
else:
    class Priority(str, Enum):
        low = "low"
        medium = "medium"
        high = "high"

Status = Literal["open", "closed", "archived"] if V2 else Literal["open", "closed"]


class Ticket(BaseModel):
    id: int
    title: str
    priority: Priority
    status: Status
    assignee: Optional[str] = None


kwargs = {}
if not MCP2 and MODE != "stdio":
    kwargs = {"host": "127.0.0.1", "port": PORT, "stateless_http": MODE == "stateless"}
mcp = Server("covenant-fastmcp", **kwargs)


@mcp.tool()
def create_ticket(
    title: str = Field(description="Short summary"),
    priority: Priority = Priority.medium,
    tags: list[str] = [],
    assignee: Optional[str] = None,
) -> Ticket:
    """Create a ticket."""
    return Ticket(id=1, title=title, priority=priority, status="open", assignee=assignee)


if V2:
    @mcp.tool()
    def search(query: str, limit: int, offset: int = 0) -> list[Ticket]:
        """Search tickets."""
        return []

    @mcp.tool()
    def close_ticket(ticket_id: int) -> Ticket:
        """Close a ticket."""
        return Ticket(id=ticket_id, title="", priority=Priority.high, status="closed")
else:
    @mcp.tool()
    def search(query: str, limit: int = 10) -> list[Ticket]:
        """Search tickets."""
        return []

    @mcp.tool()
    def legacy_ping() -> str:
        """Old health check."""
        return "pong"


@mcp.resource("config://app", mime_type="application/json")
def config() -> str:
    """Application configuration."""
    return "{}"


@mcp.resource("tickets://{ticket_id}")
def ticket(ticket_id: str) -> str:
    """One ticket as text."""
    return ticket_id


if V2:
    @mcp.prompt()
    def summarize(topic: str, audience: str, style: str = "short") -> str:
        """Summarize a topic."""
        return f"Summarize {topic} for {audience}, {style}"
else:
    @mcp.prompt()
    def summarize(topic: str, style: str = "short") -> str:
        """Summarize a topic."""
        return f"Summarize {topic}, {style}"


if MODE == "stdio":
    mcp.run()
elif MCP2:
    mcp.run(transport="streamable-http", host="127.0.0.1", port=PORT, stateless_http=MODE == "stateless")
else:
    mcp.run(transport="streamable-http")
