"""A scripted OpenAI-compatible chat-completions server on loopback that answers per episode.

tests/test_llm.py's `ScriptedModel` pops one global script in request order, which suits one
episode at a time. Concurrent rollouts (verifiers runs a batch at once) need each request answered
from its own episode's script: `EpisodeScriptedModel` recognises the episode by the ticket line of
the conversation's first user message ("Ticket T-123 (task ...)", supportenv.llm.user_prompt) and
answers with that script's next reply, counted by the assistant messages the request already holds.

A reply is a string (the message's content) or a list of (function name, arguments JSON) pairs
(tool calls in OpenAI's format). A request matching no script, or past its script's end, gets HTTP
400, which the openai client does not retry.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from supportenv.actions import Action
from supportenv.llm import ACTION_SPECS

Reply = str | list[tuple[str, str]]
_TICKET = re.compile(r"^Ticket (\S+) \(task (\w+)\)")


def episode_key(user_message: str) -> str:
    """The episode a conversation is about: its ticket and task, from the first user message."""
    match = _TICKET.match(user_message)
    return f"{match.group(1)}/{match.group(2)}" if match else ""


def tool_call_of(action: Action) -> tuple[str, str]:
    """The function call a tool-calling model makes for this action: (name, arguments JSON)."""
    if action.kind == "use_tool":
        return action.tool, json.dumps(dict(action.arguments))
    _, params, _ = ACTION_SPECS[action.kind]
    arguments: dict[str, Any] = {}
    for name, schema in params.items():
        if name == "fields":
            value: Any = list(action.fields)
        elif schema.get("type") == "string" and "enum" not in schema:
            value = action.text  # the kind's one free-text parameter (message, question, reason, note, summary)
        else:
            value = getattr(action, name)
        if value:
            arguments[name] = value
    return action.kind, json.dumps(arguments)


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # a batch of rollouts connects at once; the default backlog of 5 drops some
    daemon_threads = True


class EpisodeScriptedModel:
    def __init__(self, scripts: dict[str, list[Reply]]) -> None:
        self.scripts = scripts
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the openai client expects of a server

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                with model.lock:
                    model.requests.append(body)
                messages = body.get("messages", [])
                first_user = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
                script = model.scripts.get(episode_key(first_user if isinstance(first_user, str) else ""))
                turn = sum(m.get("role") == "assistant" for m in messages)
                if script is None or turn >= len(script):
                    return self._send(400, {"error": {"message": "no scripted reply", "type": "invalid_request"}})
                reply = script[turn]
                message: dict[str, Any] = {"role": "assistant", "content": reply}
                if not isinstance(reply, str):
                    calls = [
                        {"id": f"call_{turn}_{n}", "type": "function", "function": {"name": name, "arguments": args}}
                        for n, (name, args) in enumerate(reply)
                    ]
                    message = {"role": "assistant", "content": None, "tool_calls": calls}
                finish = "stop" if isinstance(reply, str) else "tool_calls"
                return self._send(
                    200,
                    {
                        "id": f"chatcmpl-{len(model.requests)}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", ""),
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    },
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("x-should-retry", "false")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> EpisodeScriptedModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)
