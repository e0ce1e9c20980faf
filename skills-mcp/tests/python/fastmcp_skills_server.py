"""FastMCP's skills server over stdio, serving the skill folders below a directory.

usage: fastmcp_skills_server.py <skills dir>
"""

import sys
from pathlib import Path

from fastmcp import FastMCP
from fastmcp.skills.provider import SkillsDirectoryProvider

mcp = FastMCP("fastmcp-skills")
mcp.add_provider(SkillsDirectoryProvider(Path(sys.argv[1])))


@mcp.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


mcp.run(transport="stdio", show_banner=False)
