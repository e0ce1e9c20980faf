"""The official MCP Python SDK calling a server's tools over stdio; prints JSON.

usage: mcp_sdk_tools.py <command> [args...]
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def text_of(result) -> dict:
    texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    return {"is_error": bool(result.is_error), "text": "".join(texts)}


async def main() -> None:
    params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            out = {"tools": sorted(t.name for t in tools.tools)}
            out["use_skill"] = text_of(await session.call_tool("use_skill", {"skill_name": "greeter"}))
            out["read_skill_file"] = text_of(
                await session.call_tool(
                    "read_skill_file", {"skill_name": "greeter", "path": "references/guide.md"}
                )
            )
            out["escape"] = text_of(
                await session.call_tool(
                    "read_skill_file", {"skill_name": "greeter", "path": "../../../../etc/passwd"}
                )
            )
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
