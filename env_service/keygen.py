"""python -m env_service.keygen PATH: create the shared token key file, once.

Writes a random 64-hex-character key to PATH (mode 0600, parent folders created) only if
PATH does not exist yet, so every env replica pointed at it with $SUPPORTENV_TOKEN_KEY_FILE
signs and verifies with the same key, and a rerun never invalidates live tokens.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from pathlib import Path

from supportenv.cli import run_cli

PROG = "python -m env_service.keygen"

KEY_BYTES = 32  # 64 hex characters


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__)
    parser.add_argument("path", type=Path, metavar="PATH")
    path: Path = parser.parse_args(argv).path
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        # O_EXCL: create-or-fail in one step, so two concurrent runs cannot both write a key.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        print(f"keygen: {path} exists; keeping its key")
        return 0
    with os.fdopen(fd, "w") as out:
        out.write(secrets.token_hex(KEY_BYTES) + "\n")
    print(f"keygen: wrote a new token key to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
