"""The README is the front door: its tables and commands must stay true."""

from __future__ import annotations

from pathlib import Path

from tools.readme_tables import reward_rows, task_rows

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_task_and_reward_tables_match_the_code():
    for row in task_rows() + reward_rows():
        assert row in README, f"README row is stale, regenerate with tools/readme_tables.py: {row}"


def test_front_door_commands():
    for command in ("make run", "make test", "docker compose up", "make proto"):
        assert command in README
