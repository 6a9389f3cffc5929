"""The environment as an MCP (Model Context Protocol) server, on the official `mcp` Python SDK.

    python -m supportenv.mcp                                   # stdio: what an MCP client launches
    python -m supportenv.mcp --transport streamable-http --port 8001

Each MCP session (client connection) plays one episode at a time through tools: `reset(task_id,
split, seed)` returns the prompt a model needs (supportenv.llm's system and user prompts), one tool
per action kind and per help-desk tool (supportenv.llm.action_tools' names and schemas, the calls
read by supportenv.llm.parse_tool_call as the LLM policy reads them) returns the step's reward,
whether the episode ended and the next observation, and `grade()` the grader's verdict.

- `server`: the tools and the per-session episode (`make_server`).
- `backends`: where episodes run: in-process (the library, the default) or on the gRPC env service.
- `transports`: how clients reach it: stdio, and streamable HTTP (the SDK's, served by uvicorn).
- `__main__`: the command line.

Needs the `mcp` package (requirements-mcp.txt). Nothing else in supportenv imports it.
"""
