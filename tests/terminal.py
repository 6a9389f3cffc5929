"""Child processes started as a terminal starts its foreground job: with SIGINT at its default, so that
Python turns Ctrl-C into KeyboardInterrupt (a test run started in the background, `make test &` or some
CI runners, hands its children SIGINT ignored). A tiny Python wrapper sets it and then execs the command:
not a `preexec_fn`, which makes the test process fork and run Python code before the exec, and a test
process with grpc's threads running then lets grpc's fork handlers write to the child's stderr (a
"epoll_wait error: Bad file descriptor" line, read by the tests that check that stderr is one line)."""

from __future__ import annotations

import sys

_WITH_SIGINT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])"
)


def as_at_a_terminal(command: list[str]) -> list[str]:
    """`command`, run with SIGINT at its default (the same process: the wrapper execs it)."""
    return [sys.executable, "-c", _WITH_SIGINT, *command]
