"""Secret keys from the services' environment (the simulation library never reads it):
`read_key` and `read_or_exit`, the way every key setting is read and refused, and the world key.

A key comes from a variable, else from the file another variable names; it must be at least
MIN_KEY_BYTES long. The token key (env_service.tokens) is read this way, and so is the world
key: $SUPPORTENV_WORLD_KEY or the file named by $SUPPORTENV_WORLD_KEY_FILE, optional and absent
by default. Set, it seals the world for an evaluation (supportenv.world): the env service and
the grader service must both hold it, or the grader scores another world's tickets.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from supportenv.world import world_id

MIN_KEY_BYTES = 16
WORLD_KEY_ENV = "SUPPORTENV_WORLD_KEY"
WORLD_KEY_FILE_ENV = "SUPPORTENV_WORLD_KEY_FILE"

log = logging.getLogger(__name__)
T = TypeVar("T")


class KeySettingError(ValueError):
    """A configured key is unusable (too short, unreadable, inconsistent settings)."""


def read_key(
    environ: Mapping[str, str], value_var: str, file_var: str, what: str, required_file: bool = True
) -> tuple[bytes, str] | None:
    """The `what` key from `value_var`, else from the file named by `file_var`; with where it
    came from. A missing file is an error when `required_file`, and means "none" otherwise."""
    value, path = environ.get(value_var, ""), environ.get(file_var, "")
    source = value_var
    if not value and path:
        source = f"{file_var}={path}"
        try:
            value = Path(path).read_text().strip()
        except FileNotFoundError:
            if required_file:
                raise KeySettingError(f"{source}: no such file") from None
            return None
        except OSError as exc:
            raise KeySettingError(f"{source}: cannot read it: {exc.strerror or exc}") from None
        if not value:
            raise KeySettingError(f"{source}: the file is empty")
    if not value:
        return None
    key = value.encode()
    if len(key) < MIN_KEY_BYTES:
        raise KeySettingError(
            f"{source}: the {what} is {len(key)} bytes; it must be at least {MIN_KEY_BYTES} "
            "(make one with `python -m env_service.keygen PATH`)"
        )
    return key, source


def read_world_key(environ: Mapping[str, str] | None = None) -> bytes | None:
    """The configured world key, or None (the public world). KeySettingError when unusable."""
    found = read_key(os.environ if environ is None else environ, WORLD_KEY_ENV, WORLD_KEY_FILE_ENV, "world key")
    return None if found is None else found[0]


def read_or_exit(service: str, what: str, read: Callable[[], T]) -> T:
    """read(), or, when a setting is unusable, stop the service with one line saying which and why."""
    try:
        return read()
    except KeySettingError as exc:
        raise SystemExit(f"{service}: bad {what} setting: {exc}") from None


def load_world_key(service: str) -> bytes | None:
    """This process's world key, from the environment; an unusable setting stops the service."""
    key = read_or_exit(service, "world key", read_world_key)
    if key is None:
        log.info(
            "world %s: %s is not set, so anyone with the library can regenerate its tickets",
            world_id(key),
            WORLD_KEY_ENV,
        )
    else:
        log.info("world %s: sealed by the world key", world_id(key))
    return key
