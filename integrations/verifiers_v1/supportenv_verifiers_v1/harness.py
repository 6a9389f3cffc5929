"""The taskset's default harness: verifiers' own tool-calling chat loop (`null`), no shell.

Without a harness of its own a taskset defaults to `bash`, which hands the model a shell on
the runtime; a support agent acts only through the ticket's tools (the taskset's MCP server),
so the bundled harness is the plain chat loop. Pin another with `--env.agent.harness.id`.
"""

from verifiers.v1.harnesses.null import NullHarness


class SupportHarness(NullHarness):
    pass
