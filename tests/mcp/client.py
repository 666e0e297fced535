"""A real MCP client for the tests: the official Python SDK (`mcp` on PyPI) drives
`notabene mcp` over stdio.

Usage: client.py NOTABENE_BINARY BOOK_DIR < calls.json

calls.json is a JSON array of steps, run in order on one connection:
  {"tool": NAME, "args": {...}}      -> {"isError": bool, "text": str, "structured": obj|null}
  {"op": "list_tools"}               -> {"tools": [{"name", "description", "inputSchema"}]}
  {"op": "read_resource", "uri": U}  -> {"text": str, "mimeType": str}
  {"op": "list_resources"}           -> {"resources": [{"uri", "name", "mimeType"}]}
  {"op": "list_prompts"}             -> {"prompts": [names]}
  {"op": "get_prompt", "name": N}    -> {"text": str}
The results are printed as one JSON array. The server's environment is this process's
NOTABENE_*, GIT_* and PATH variables (the test pins them), and its stderr is ours. The
client introduces itself as "Test Agent" (CLIENT_INFO).
"""

import asyncio
import json
import os
import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import Implementation

# What the client calls itself in `initialize` (its clientInfo): the server writes as it.
CLIENT_INFO = Implementation(name="notabene-tests", title="Test Agent", version="1.0")


async def main() -> None:
    binary, book = sys.argv[1], sys.argv[2]
    steps = json.load(sys.stdin)
    env = {k: v for k, v in os.environ.items() if k.startswith(("NOTABENE_", "GIT_")) or k in ("PATH", "HOME")}
    params = StdioServerParameters(command=binary, args=["mcp", "--book", book], env=env, cwd=os.getcwd())
    out = []
    async with Client(params, client_info=CLIENT_INFO) as client:
        for step in steps:
            if "tool" in step:
                r = await client.call_tool(step["tool"], step.get("args", {}))
                text = "".join(c.text for c in r.content if getattr(c, "type", "") == "text")
                out.append({"isError": bool(r.is_error), "text": text, "structured": r.structured_content})
            elif step["op"] == "list_tools":
                r = await client.list_tools()
                out.append({"tools": [{"name": t.name, "description": t.description, "inputSchema": t.input_schema} for t in r.tools]})
            elif step["op"] == "list_resources":
                r = await client.list_resources()
                out.append({"resources": [{"uri": str(x.uri), "name": x.name, "mimeType": x.mime_type} for x in r.resources]})
            elif step["op"] == "read_resource":
                r = await client.read_resource(step["uri"])
                out.append({"text": r.contents[0].text, "mimeType": r.contents[0].mime_type})
            elif step["op"] == "list_prompts":
                r = await client.list_prompts()
                out.append({"prompts": [p.name for p in r.prompts]})
            elif step["op"] == "get_prompt":
                r = await client.get_prompt(step["name"])
                out.append({"text": r.messages[0].content.text})
            else:
                raise SystemExit(f"unknown step {step!r}")
    json.dump(out, sys.stdout)


asyncio.run(main())
