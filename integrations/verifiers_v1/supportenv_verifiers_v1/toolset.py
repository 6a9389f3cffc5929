"""The ticket's tools as an MCP server: one function per action kind and, on a task that takes
use_tool, one per help-desk tool (`supportenv.llm.action_tools`), schemas as the library gives them.

One server serves every rollout of a run (a taskset-scoped toolset); each call carries its
rollout's state (supportenv_verifiers_v1.state), so the catalogue is the rollout's task's and a
call steps the rollout's own episode: read with `supportenv.llm.parse_tool_call` (a bad call
becomes the penalised invalid step the library applies) and answered with the next observation
as `supportenv.llm.user_prompt` renders it, which carries the step's reward and feedback. A call
after the episode has ended is not applied.
"""

from typing import Any, cast

import verifiers.v1 as vf
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent, Tool

from supportenv.llm import action_tools, parse_tool_call, user_prompt
from supportenv_verifiers_v1.state import SupportState, replay

EPISODE_OVER = "The episode has ended: no further action is taken."
NOT_APPLIED = "Not applied: the episode had already ended."


class SupportToolset(vf.Toolset[vf.SharedToolsetConfig, SupportState]):
    TOOL_PREFIX = None  # the model calls the functions by the library's own names

    def register(self, mcp: MCPServer) -> None:
        # The catalogue depends on the rollout's task, so the server answers MCP's list and call
        # requests itself (as verifiers' NeMo Gym toolset does) rather than register fixed tools.
        server = cast(Any, mcp)
        server.list_tools = self._with_state(self.list_tools)
        server.call_tool = self._with_state(self.call_tool)

    async def list_tools(self) -> list[Tool]:
        functions = (tool["function"] for tool in action_tools(self.state.task_id))
        return [Tool(name=f["name"], description=f["description"], input_schema=f["parameters"]) for f in functions]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context | None = None) -> CallToolResult:
        state = self.state
        if state.done:
            return _text(NOT_APPLIED)
        env, observation = replay(state)
        action = parse_tool_call(name, arguments, observation.allowed_actions)
        observation, reward, done, _ = env.step(action)
        state.actions.append(action.to_dict())
        state.step_rewards.append(reward)
        state.done = done
        text = user_prompt(observation, tool_calls=True)
        return _text(f"{text}\n\n{EPISODE_OVER}" if done else text)


def _text(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)])


if __name__ == "__main__":
    SupportToolset.run()
