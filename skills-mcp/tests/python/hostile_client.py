"""FastMCP's client as a hostile party against a skills server over stdio; prints JSON.

usage: hostile_client.py <command> [args...]

Lists resources, reads what a skill must never serve (hidden and vendored files, paths out of
the skill, lookalike names) through resources/read and read_skill_file, reads one good file,
then waits for a line on its own standard input ("again") before reading the good file once
more: the caller changes the store in between.
"""

import asyncio
import json
import sys

from fastmcp import Client
from fastmcp.client.transports import StdioTransport

BAD_PATHS = [".env", ".git/config", "node_modules/pad/index.js", "../secret.txt", "%2e%2e/secret.txt"]


async def try_read(client, uri):
    try:
        contents = await client.read_resource(uri)
        return {"served": True, "text": "".join(getattr(c, "text", "") for c in contents)}
    except Exception as error:  # the refusal is what we want to see
        return {"served": False, "error": str(error)[:200]}


async def try_tool(client, name, arguments):
    result = await client.call_tool(name, arguments, raise_on_error=False)
    texts = "".join(getattr(c, "text", "") for c in result.content)
    return {"is_error": bool(result.is_error), "text": texts[:400]}


async def main() -> None:
    client = Client(StdioTransport(command=sys.argv[1], args=sys.argv[2:]))
    out = {}
    async with client:
        out["resources"] = sorted(str(r.uri) for r in await client.list_resources())
        out["reads"] = {p: await try_read(client, f"skill://greeter/{p}") for p in BAD_PATHS}
        out["lookalike"] = await try_read(client, "skill://gr\u0435eter/SKILL.md")
        out["tools"] = {
            p: await try_tool(client, "read_skill_file", {"skill_name": "greeter", "path": p})
            for p in BAD_PATHS
        }
        out["good"] = await try_read(client, "skill://greeter/SKILL.md")
        print(json.dumps({"ready": True}), flush=True)
        sys.stdin.readline()
        out["after"] = await try_read(client, "skill://greeter/SKILL.md")
        out["after_tool"] = await try_tool(client, "use_skill", {"skill_name": "greeter"})
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
