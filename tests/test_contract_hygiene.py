"""Contract hygiene in CI: `buf lint` (protos/buf.yaml) and `buf breaking` against the
previous commit, exactly as `make lint` runs them (tools/buf/check.sh), with the buf
pinned in tools/buf/package-lock.json. Skipped when node or npm is not on PATH."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.npm import npm_ci

ROOT = Path(__file__).resolve().parent.parent
BUF_DIR = ROOT / "tools" / "buf"
CHECK = BUF_DIR / "check.sh"
NODE, NPM, GIT = shutil.which("node"), shutil.which("npm"), shutil.which("git")
TIMEOUT = 300

pytestmark = pytest.mark.skipif(NODE is None or NPM is None, reason="node and npm are needed to install buf")


@pytest.fixture(scope="module")
def buf_installed() -> Path:
    return npm_ci(BUF_DIR)


def _check(script: Path, what: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", str(script), what], capture_output=True, text=True, timeout=TIMEOUT)


def test_buf_lint(buf_installed):
    done = _check(CHECK, "lint")
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_breaking_change_since_the_previous_commit(buf_installed):
    done = _check(CHECK, "breaking")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "buf breaking: ok" in done.stdout or "buf breaking: skipped" in done.stdout, done.stdout


def _git(repo: Path, *args: str) -> None:
    isolated = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(
        [GIT, "-c", "user.name=test", "-c", "user.email=test@example.invalid", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        env=isolated,
        timeout=60,
    )


@pytest.mark.skipif(GIT is None, reason="git is needed")
def test_breaking_check_skips_without_a_previous_commit_and_catches_a_break(buf_installed, tmp_path):
    """The same script in a scratch repository: first commit skipped, a renumbered field caught."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "protos", repo / "protos")
    (repo / "tools" / "buf").mkdir(parents=True)
    shutil.copy(CHECK, repo / "tools" / "buf" / "check.sh")
    (repo / "tools" / "buf" / "node_modules").symlink_to(buf_installed, target_is_directory=True)
    script = repo / "tools" / "buf" / "check.sh"
    _git(repo, "init", "-q")
    _git(repo, "add", "protos")
    _git(repo, "commit", "-q", "-m", "contract")

    done = _check(script, "breaking")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "buf breaking: skipped, no previous commit" in done.stdout

    types = repo / "protos" / "supportenv" / "v1" / "types.proto"
    text = types.read_text()
    assert text.count("string summary = 1;") == 1
    types.write_text(text.replace("string summary = 1;", "string summary = 9;"))
    _git(repo, "commit", "-q", "-a", "-m", "renumber MarkResolved.summary")

    done = _check(script, "breaking")
    assert done.returncode != 0, done.stdout + done.stderr
    assert "MarkResolved" in done.stdout + done.stderr
