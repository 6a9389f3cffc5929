"""Scripted OpenAI-compatible chat-completions servers on loopback (POST /v1/chat/completions),
standing in for the model (which is external) in the tests of inference.py, the LLM policy and the
verifiers environments. Every request and its headers are kept; errors carry `x-should-retry: false`,
so the openai client sends one request per scripted step; a request with `stream: true` gets its
completion as a server-sent-event stream of one chunk (verifiers 0.4's chat program asks for one).

- `ScriptedModel` answers from one script in request order, which suits one episode at a time: a
  string is the reply's content, ("tool", name, arguments) a tool call, an int an HTTP error; past
  the end, HTTP 500.
- `EpisodeScriptedModel` answers each request from its own episode's script, for concurrent
  rollouts (verifiers runs a batch at once): it recognises the episode by the ticket line of the
  conversation's first user message ("Ticket T-123 (task ...)", supportenv.llm.user_prompt) and
  answers with that script's next reply, counted by the assistant messages the request already
  holds. A reply is a string (the message's content) or a list of (function name, arguments JSON)
  pairs (tool calls). A request matching no script, or past its script's end, gets HTTP 400.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from supportenv import llm
from supportenv.actions import Action

Reply = str | list[tuple[str, str]]
_TICKET = re.compile(r"^Ticket (\S+) \(task (\w+)\)")


def episode_key(user_message: str) -> str:
    """The episode a conversation is about: its ticket and task, from the first user message."""
    match = _TICKET.match(user_message)
    return f"{match.group(1)}/{match.group(2)}" if match else ""


def tool_call_of(action: Action) -> tuple[str, str]:
    """The function call a tool-calling model makes for this action: (name, arguments JSON)."""
    name, arguments = llm.tool_call_of(action)
    return name, json.dumps(arguments)


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # a batch of rollouts connects at once; the default backlog of 5 drops some
    daemon_threads = True


def _error(status: int, message: str, kind: str = "server_error") -> tuple[int, dict[str, Any]]:
    return status, {"error": {"message": message, "type": kind}}


def _calls(calls: list[tuple[str, str]], turn: int = 0) -> dict[str, Any]:
    """An assistant message making these (function name, arguments JSON) calls."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": f"call_{turn}_{n}", "type": "function", "function": {"name": name, "arguments": args}}
            for n, (name, args) in enumerate(calls)
        ],
    }


class _ChatCompletions:
    """The endpoint itself; a subclass's `answer(body)` gives each request's (status, message or error)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the openai client expects of a server

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._send(*_error(404, f"no route {self.path}"))
                with model.lock:
                    model.requests.append(body)
                    model.headers.append({k.lower(): v for k, v in self.headers.items()})
                    status, answer = model.answer(body)
                if status != 200:
                    return self._send(status, answer)
                finish = "tool_calls" if answer.get("tool_calls") else "stop"
                completion = {
                    "id": f"chatcmpl-{len(model.requests)}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", ""),
                    "choices": [{"index": 0, "message": answer, "finish_reason": finish}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
                if body.get("stream"):
                    return self._stream(completion)
                return self._send(200, completion)

            def _stream(self, completion: dict[str, Any]) -> None:
                """The completion as a server-sent-event stream (`stream: true`): one chunk, then [DONE]."""
                (choice,) = completion["choices"]
                delta = dict(choice["message"])
                if delta.get("tool_calls"):
                    delta["tool_calls"] = [{**call, "index": n} for n, call in enumerate(delta["tool_calls"])]
                chunk = {
                    **{k: v for k, v in completion.items() if k != "choices"},
                    "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": choice["finish_reason"]}],
                }
                data = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("x-should-retry", "false")  # no client retries: one request per scripted step
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)

    def user_prompts(self) -> list[str]:
        return [next(m["content"] for m in r["messages"] if m["role"] == "user") for r in self.requests]


class ScriptedModel(_ChatCompletions):
    def __init__(self, script: list[Any]) -> None:
        super().__init__()
        self.script = list(script)

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        step = self.script.pop(0) if self.script else 500
        if isinstance(step, int):
            return _error(step, "scripted failure")
        if isinstance(step, tuple):
            return 200, _calls([(step[1], step[2])], 1)
        return 200, {"role": "assistant", "content": step}


class EpisodeScriptedModel(_ChatCompletions):
    def __init__(self, scripts: dict[str, list[Reply]]) -> None:
        super().__init__()
        self.scripts = scripts

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        messages = body.get("messages", [])
        first_user = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
        script = self.scripts.get(episode_key(first_user if isinstance(first_user, str) else ""))
        turn = sum(m.get("role") == "assistant" for m in messages)
        if script is None or turn >= len(script):
            return _error(400, "no scripted reply", "invalid_request")
        reply = script[turn]
        return 200, {"role": "assistant", "content": reply} if isinstance(reply, str) else _calls(reply, turn)
