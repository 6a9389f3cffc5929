"""What every command line of the project does at its edge: when its reader goes away
(`... | head`) or the user presses Ctrl-C, it stops with at most one short line on stderr
and no traceback.

    if __name__ == "__main__":
        sys.exit(run_cli(main, "python -m supportenv.world"))

Nothing happens at import; `run_cli` acts only around the `main` it is given."""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Callable

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for `yes | head`
EXIT_INTERRUPTED = 130  # 128 + SIGINT


def run_cli(main: Callable[[], int | None], prog: str) -> int:
    """Run `main()` and return its exit code (None counts as 0). A closed stdout ends the
    run quietly with 141; Ctrl-C (KeyboardInterrupt) with `PROG: interrupted` and 130.
    SystemExit (argparse, an explicit exit) passes through untouched."""
    try:
        code = main()
        sys.stdout.flush()  # a reader that left shows here, not as an error at exit
        return code or 0
    except BrokenPipeError:
        _drop_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        _say(f"{prog}: interrupted")
        return EXIT_INTERRUPTED


def ignore_sigint() -> None:
    """For worker processes (a Pool's initializer): Ctrl-C in a terminal reaches every process
    of the group, and only the parent should answer it, once, without a worker's traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _drop_stdout() -> None:
    """Close stdout whose reader left, discarding what is still buffered, so the interpreter
    has nothing left to flush at exit (which would print `Exception ignored ... BrokenPipeError`).
    Closing flushes once more, fails, and closes all the same."""
    stream = sys.stdout
    if stream is None:
        return
    with contextlib.suppress(OSError, ValueError):  # BrokenPipeError is an OSError
        stream.close()


def _say(line: str) -> None:
    stream = sys.stderr
    if stream is None:
        return
    try:
        # After ^C a terminal's cursor sits on the echoed "^C": start on a line of our own.
        lead = "\n" if stream.isatty() else ""
        stream.write(f"{lead}{line}\n")
        stream.flush()
    except (OSError, ValueError):
        pass
