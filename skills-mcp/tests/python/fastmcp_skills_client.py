"""FastMCP's skills client against a server: list, get, read every skill, print JSON.

usage: fastmcp_skills_client.py stdio <command> [args...]
       fastmcp_skills_client.py http <url> <bearer token>
"""

import asyncio
import json
import sys

from fastmcp import Client
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport
from fastmcp.skills import SkillsClientExtension


async def main() -> None:
    mode = sys.argv[1]
    if mode == "stdio":
        transport = StdioTransport(command=sys.argv[2], args=sys.argv[3:])
    else:
        transport = StreamableHttpTransport(sys.argv[2], auth=sys.argv[3])
    client = Client(transport, extensions=[SkillsClientExtension()])
    out = {"skills": []}
    async with client:
        out["protocol_version"] = client.protocol_version
        for entry in await client.list_skills():
            got = await client.get_skill(entry.uri)
            skill = await client.read_skill(entry.uri)  # checks every size and digest
            out["skills"].append(
                {
                    "uri": entry.uri,
                    "name": skill.name,
                    "frontmatter": got.frontmatter.root,
                    "files": sorted(skill.files),
                }
            )
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
