"""The MCP server (supportenv.mcp) through the official SDK's own client: `python -m supportenv.mcp`
launched over stdio and served over streamable HTTP, each a real subprocess on loopback. The
oracle's actions, sent as the tool calls action_tools describes, give every step's reward, every
observation's text and the final grade exactly as the library gives them for the same actions;
calls the server must refuse are tool errors that say what to do; and the episodes also run on
the gRPC env service (--env-address) against EmbeddedServices."""

from __future__ import annotations

import os
import pty
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from terminal import as_at_a_terminal

from baseline_agent.embedded import ROOT, EmbeddedServices
from baseline_agent.policies import make_policy
from supportenv.catalog import TOOL_KIND
from supportenv.cli import EXIT_INTERRUPTED
from supportenv.env import SupportEnv
from supportenv.graders import Grade
from supportenv.llm import action_tools, parse_tool_call, system_prompt, tool_call_of, user_prompt
from supportenv.tasks import ALL_TASK_IDS, get_task
from supportenv.tools import TOOLS_BY_NAME
from tests.test_contract import _imports

pytestmark = pytest.mark.timeout(60)
TASKS = ("issue_classification", "action_selection", "end_to_end_resolution", "expert_resolution")
SPLIT, SEED = "test", 3
SERVER = [sys.executable, "-m", "supportenv.mcp"]
READY = re.compile(r"at (http://\S+/mcp)")
DATA = "  data: "  # how supportenv.llm.user_prompt shows a tool result's data


def test_every_task_is_played():
    assert set(TASKS) == set(ALL_TASK_IDS)


# ---- the library's episode, and the oracle's actions as tool calls ----


class LibraryEpisode:
    """The oracle's episode played in-process: each step's call, reward and observation text, and the grade."""

    def __init__(self, task_id: str, split: str = SPLIT, seed: int = SEED) -> None:
        self.task_id, self.split, self.seed = task_id, split, seed
        policy = make_policy("oracle")
        policy.begin(task_id, split, seed)
        env = SupportEnv(task_id, split, seed)
        obs = env.reset()
        self.system, self.first = system_prompt(obs, tool_calls=True), user_prompt(obs, tool_calls=True)
        self.steps: list[tuple[str, dict[str, Any], float, bool, str]] = []
        done = False
        while not done:
            action = policy.act(obs)
            name, arguments = tool_call_of(action)
            assert parse_tool_call(name, arguments) == action, "the call must read back as the oracle's action"
            obs, reward, done, _ = env.step(action)
            self.steps.append((name, arguments, reward, done, user_prompt(obs, tool_calls=True)))
        self.grade: Grade = env.grade()

    def reset_arguments(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "split": self.split, "seed": self.seed}


EXPECTED = {task_id: LibraryEpisode(task_id) for task_id in TASKS}


def test_the_oracle_uses_a_help_desk_tool_on_the_expert_task():
    names = [name for name, *_ in EXPECTED["expert_resolution"].steps]
    assert set(names) & set(TOOLS_BY_NAME), names


# ---- clients ----


def text(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


@asynccontextmanager
async def stdio_session(errlog: Path, *args: str) -> Any:
    params = StdioServerParameters(command=SERVER[0], args=[*SERVER[1:], *args], cwd=str(ROOT))
    with errlog.open("a") as err:
        async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


@asynccontextmanager
async def http_session(url: str) -> Any:
    async with streamable_http_client(url) as (read, write, _), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def play(session: ClientSession, expected: LibraryEpisode) -> None:
    """Reset, the oracle's calls, then grade, each checked against the library's episode (the
    observations to the letter, over the wire too)."""
    reset = await session.call_tool("reset", expected.reset_arguments())
    assert not reset.isError, text(reset)
    assert text(reset)[:2] == [expected.system, expected.first]
    assert reset.structuredContent is not None
    assert reset.structuredContent["allowed_actions"] == list(get_task(expected.task_id).allowed_actions)
    for n, (name, arguments, reward, done, observation) in enumerate(expected.steps, 1):
        result = await session.call_tool(name, arguments)
        assert not result.isError, (n, name, text(result))
        step = result.structuredContent
        assert step is not None
        assert (step["reward"], step["done"]) == (reward, done), (expected.task_id, n, name)
        assert text(result)[1] == observation, (expected.task_id, n, name)
        assert f"Reward {reward:+.2f}" in text(result)[0]
    graded = await session.call_tool("grade", {})
    assert not graded.isError, text(graded)
    grade, want = graded.structuredContent, expected.grade
    assert grade is not None
    assert (grade["score"], grade["passed"]) == (want.score, want.passed)
    assert grade["failed_gates"] == list(want.failed_gates)
    assert [(c["name"], c["score"], c["weight"], c["detail"]) for c in grade["components"]] == [
        (c.name, c.score, c.weight, c.detail) for c in want.components
    ]
    assert want.score == 1.0 and want.passed  # the oracle's full marks, so a wrong action would show


def assert_quiet(errlog: Path) -> None:
    assert "Traceback" not in errlog.read_text(), errlog.read_text()


# ---- stdio ----


def test_stdio_lists_every_action_and_help_desk_tool_saying_which_tasks_take_it(tmp_path):
    async def main() -> list[types.Tool]:
        async with stdio_session(tmp_path / "stderr.txt") as session:
            return (await session.list_tools()).tools

    tools = {tool.name: tool for tool in anyio.run(main)}
    functions = {f["function"]["name"]: f["function"] for f in action_tools("expert_resolution")}
    assert list(tools) == ["reset", *functions, "grade"]
    for name, function in functions.items():
        assert tools[name].inputSchema == function["parameters"]
        kind = TOOL_KIND if name in TOOLS_BY_NAME else name
        takers = [t for t in ALL_TASK_IDS if kind in get_task(t).allowed_actions]
        assert tools[name].description == f"{function['description']} Tasks that take it: {', '.join(takers)}."
    assert tools["reset"].inputSchema["properties"]["task_id"]["enum"] == list(ALL_TASK_IDS)


def test_stdio_plays_every_task_as_the_library_does(tmp_path):
    errlog = tmp_path / "stderr.txt"

    async def main() -> None:
        async with stdio_session(errlog) as session:  # one session, one episode after another
            for task_id in TASKS:
                await play(session, EXPECTED[task_id])

    anyio.run(main)
    assert "serving MCP over stdio" in errlog.read_text()
    assert_quiet(errlog)


def test_stdio_refusals_are_tool_errors_that_say_what_to_do(tmp_path):
    errlog = tmp_path / "stderr.txt"
    classification = EXPECTED["issue_classification"]

    async def main() -> None:
        async with stdio_session(errlog) as session:

            async def refused(name: str, arguments: dict[str, Any], *needles: str) -> None:
                result = await session.call_tool(name, arguments)
                assert result.isError, (name, text(result))
                message = " ".join(text(result))
                for needle in needles:
                    assert needle in message, (needle, message)

            await refused("classify_issue", {"category": "billing"}, "no episode yet", "call reset(")
            await refused("grade", {}, "no episode to grade", "reset(")
            await refused("no_such_tool", {}, "unknown tool 'no_such_tool'", "reset", "grade", "issue_refund")
            await refused("reset", {"task_id": "no_such_task"}, "unknown task_id", *ALL_TASK_IDS)
            await refused("reset", {"seed": -1}, "non-negative integer")
            await refused("reset", {"sed": 1}, "unknown argument(s): sed")

            assert not (await session.call_tool("reset", classification.reset_arguments())).isError
            allowed = ", ".join(get_task("issue_classification").allowed_actions)
            await refused(
                "issue_refund",
                {"order_id": "ORD-1", "amount": "1"},
                "task issue_classification does not take use_tool",
                f"its actions: {allowed}",
            )
            # Arguments that do not validate are read as the LLM policy reads them: a penalised step.
            bad = await session.call_tool("classify_issue", {"category": "weather"})
            assert not bad.isError and bad.structuredContent is not None
            assert bad.structuredContent["action"]["kind"] == "invalid_action"
            env = SupportEnv(classification.task_id, SPLIT, SEED)
            env.reset()
            _, reward, *_ = env.step(parse_tool_call("classify_issue", {"category": "weather"}))
            assert bad.structuredContent["reward"] == reward < 0

            while not (await session.call_tool("mark_resolved", {})).structuredContent["done"]:  # type: ignore[index]
                pass
            await refused("mark_resolved", {}, "the episode has ended", "grade()", "reset(")
            assert not (await session.call_tool("grade", {})).isError  # the grade, still
            # A new episode after the end: the session goes on.
            await play(session, classification)

    anyio.run(main)
    assert_quiet(errlog)


def test_one_ctrl_c_stops_a_stdio_server_at_a_terminal():
    """Its stdin a terminal, as when run by hand: the first Ctrl-C ends it (the SDK's own stdin reader
    held it until the next line), with run_cli's one line and exit status."""
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen(
            as_at_a_terminal(SERVER),
            cwd=ROOT,
            stdin=terminal,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        assert process.stderr is not None
        assert "serving MCP over stdio" in process.stderr.readline().decode()
        process.send_signal(signal.SIGINT)
        try:
            code = process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
        assert (code, process.stderr.read().decode()) == (EXIT_INTERRUPTED, "python -m supportenv.mcp: interrupted\n")
    finally:
        os.close(controller)
        os.close(terminal)


def test_help_names_the_program_and_every_option():
    result = subprocess.run([*SERVER, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=30, check=True)
    assert result.stdout.startswith("usage: python -m supportenv.mcp")
    for option in ("--transport", "--host", "--port", "--env-address", "--grader-address", "--timeout", "--log-level"):
        assert option in result.stdout
    assert "streamable-http" in result.stdout


# ---- streamable HTTP ----


@pytest.fixture(scope="module")
def http_url(tmp_path_factory) -> Iterator[str]:
    """The server over streamable HTTP on 127.0.0.1, on a free port (--port 0; the ready line names it)."""
    errlog = tmp_path_factory.mktemp("mcp-http") / "stderr.txt"
    with errlog.open("w") as err:
        process = subprocess.Popen(
            as_at_a_terminal([*SERVER, "--transport", "streamable-http", "--host", "127.0.0.1", "--port", "0"]),
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        deadline = time.monotonic() + 20
        while not (found := READY.search(errlog.read_text())):
            assert process.poll() is None, errlog.read_text()
            assert time.monotonic() < deadline, f"no ready line:\n{errlog.read_text()}"
            time.sleep(0.05)
        yield found.group(1)
    finally:
        process.send_signal(signal.SIGINT)  # Ctrl-C: uvicorn closes the sessions, then run_cli says so
        try:
            code = process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
    log = errlog.read_text()
    assert code == EXIT_INTERRUPTED and log.endswith("python -m supportenv.mcp: interrupted\n"), (code, log)
    assert "Traceback" not in log, log


def test_http_plays_every_task_each_in_its_own_concurrent_session(http_url):
    assert http_url.startswith("http://127.0.0.1:")

    async def one(task_id: str) -> None:
        async with http_session(http_url) as session:
            await play(session, EXPECTED[task_id])

    async def main() -> None:
        async with anyio.create_task_group() as group:  # interleaved: sessions never share an episode
            for task_id in TASKS:
                group.start_soon(one, task_id)

    anyio.run(main)


def test_http_session_without_a_reset_has_no_episode(http_url):
    async def main() -> types.CallToolResult:
        async with http_session(http_url) as session:
            return await session.call_tool("mark_resolved", {})

    result = anyio.run(main)
    assert result.isError and "no episode yet" in text(result)[0]


# ---- over the gRPC env service ----


def test_episodes_on_the_env_service_graded_by_the_grader_service_or_a_replay(tmp_path):
    errlog = tmp_path / "stderr.txt"
    expert = EXPECTED["expert_resolution"]

    async def main(env: str, grader: str) -> None:
        async with stdio_session(errlog, "--env-address", env, "--grader-address", grader) as session:
            await play(session, expert)
        async with stdio_session(errlog, "--env-address", env) as session:  # graded by replaying
            await play(session, EXPECTED["end_to_end_resolution"])

    with EmbeddedServices() as services:
        assert services.env is not None and services.grader is not None
        anyio.run(main, services.env.address, services.grader.address)
    log = errlog.read_text()
    assert f"graded by the grader service at {services.grader.address}" in log
    assert "graded by a local replay" in log
    assert_quiet(errlog)


def test_an_unreachable_env_service_is_a_tool_error(tmp_path):
    errlog = tmp_path / "stderr.txt"

    async def main() -> types.CallToolResult:
        # Port 9 (discard) on loopback: nothing listens; a short deadline keeps the test quick.
        async with stdio_session(errlog, "--env-address", "127.0.0.1:9", "--timeout", "1") as session:
            return await session.call_tool("reset", EXPECTED["issue_classification"].reset_arguments())

    result = anyio.run(main)
    assert result.isError and "the env service at 127.0.0.1:9 failed: " in text(result)[0]


# ---- the library stays pure ----


def test_only_the_mcp_package_imports_mcp():
    """MCP stays at the edge: nothing in supportenv/ outside supportenv/mcp/ imports the SDK."""
    package = ROOT / "supportenv" / "mcp"
    sources = [path for path in (ROOT / "supportenv").rglob("*.py") if package not in path.parents]
    assert sources and ROOT / "supportenv" / "llm.py" in sources
    for path in sources:
        assert not any(m == "mcp" or m.startswith("mcp.") for m in _imports(path)), path
    assert any(m == "mcp" or m.startswith("mcp.") for m in _imports(package / "server.py"))
