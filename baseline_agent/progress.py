"""Progress bars for long runs: a tqdm bar on stderr, only for a person watching a terminal.

The bar is shown when stderr is a terminal and the user did not ask for --quiet. When the
per-step log lines also go to a terminal, they are written through `tqdm.write`, which clears
the bar, prints the line and redraws the bar below it, so the two never interleave. Piped or
redirected output never sees a bar, a carriage return or an escape sequence.
"""

from __future__ import annotations

import sys
from typing import IO, Any


def is_terminal(stream: IO[str] | None) -> bool:
    """True when `stream` is an open terminal; False for pipes, files, closed or odd streams."""
    isatty = getattr(stream, "isatty", None)
    if isatty is None:
        return False
    try:
        return bool(isatty())
    except (ValueError, OSError):  # closed or detached stream
        return False


def wants_bar(stream: IO[str] | None, quiet: bool) -> bool:
    """The one decision: a bar on `stream` only for an interactive, non-quiet run."""
    return not quiet and is_terminal(stream)


class Progress:
    """Episodes done / total as a tqdm bar on `stream`, or nothing at all when disabled.

    `write` prints a line to another stream without tearing the bar; use it for anything
    printed while the bar is on screen."""

    def __init__(self, total: int, enabled: bool, stream: IO[str] | None = None, unit: str = "episode") -> None:
        self._bar: Any = None
        if enabled and total > 0:
            from tqdm import tqdm  # imported only when a bar is wanted

            self._bar = tqdm(total=total, file=stream or sys.stderr, unit=unit, dynamic_ncols=True, leave=True)

    @property
    def enabled(self) -> bool:
        return self._bar is not None

    def advance(self, label: str = "") -> None:
        if self._bar is not None:
            if label:
                self._bar.set_description_str(label, refresh=False)
            self._bar.update(1)

    def write(self, line: str, file: IO[str] | None = None) -> None:
        target = file or sys.stdout
        if self._bar is not None:
            from tqdm import tqdm

            tqdm.write(line, file=target)
            target.flush()
        else:
            print(line, file=target, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is not None and self._bar is not None:
            self._bar.leave = False  # a failed run leaves its error, not a half-full bar
        self.close()


class BarSafeLines:
    """A minimal text stream that hands each complete line to `Progress.write`, so code that
    simply `print`s (the runner's [STEP] log) keeps the bar intact."""

    def __init__(self, progress: Progress, target: IO[str]) -> None:
        self._progress, self._target, self._pending = progress, target, ""

    def write(self, text: str) -> int:
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            self._progress.write(line, self._target)
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._progress.write(self._pending, self._target)
            self._pending = ""
        self._target.flush()

    def isatty(self) -> bool:
        return is_terminal(self._target)
