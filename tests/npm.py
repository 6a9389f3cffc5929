"""`npm ci` for the tests that need Node.js packages (the Node client, buf)."""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path

NODE, NPM = shutil.which("node"), shutil.which("npm")
NPM_TIMEOUT = 300
# Written into node_modules after a successful `npm ci`: the hash of the lock it installed.
STAMP_NAME = ".supportenv-lock-sha256"


def npm_ci(folder: Path) -> Path:
    """Install `folder`'s node_modules from its committed lock, only when the lock changed.
    Without bin links: symlinks in the tree would break `openenv validate` at the root."""
    stamp = folder / "node_modules" / STAMP_NAME
    wanted = hashlib.sha256((folder / "package-lock.json").read_bytes()).hexdigest()
    # One `npm ci` at a time per folder, even when several test runs share this tree.
    lock = Path(tempfile.gettempdir()) / f"supportenv-npm-{hashlib.sha256(bytes(folder)).hexdigest()[:16]}.lock"
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if not (stamp.is_file() and stamp.read_text().strip() == wanted):
            done = subprocess.run(
                [NPM or "npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--no-bin-links"],
                cwd=folder,
                capture_output=True,
                text=True,
                timeout=NPM_TIMEOUT,
            )
            assert done.returncode == 0, f"npm ci failed in {folder}:\n{done.stdout}\n{done.stderr}"
            stamp.write_text(wanted + "\n")
    return folder / "node_modules"
