"""Print the README's task and reward tables from the library's own definitions.

    python tools/readme_tables.py                  # both tables, to paste into README.md
    python tools/readme_tables.py --table rewards  # one of them
    python tools/readme_tables.py --check          # exit 1, naming each row README.md lacks

A test checks that every row printed here stands in README.md, so the README cannot
drift from the code."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from supportenv.cli import run_cli  # noqa: E402
from supportenv.rewards import REWARD_TABLE  # noqa: E402
from supportenv.tasks import ALL_TASKS  # noqa: E402

PROG = "python tools/readme_tables.py"


def task_rows() -> list[str]:
    rows = [
        "| task | difficulty | weight | max steps | pass mark | grader components (weight) |",
        "|---|---|---|---|---|---|",
    ]
    for t in ALL_TASKS:
        comps = ", ".join(f"{name} ({w:g})" for name, w in t.components)
        weight = f"{t.weight:g}" if t.weight else "apart"  # the expert task is reported apart
        rows.append(f"| `{t.task_id}` | {t.difficulty} | {weight} | {t.max_steps} | {t.pass_threshold:g} | {comps} |")
    return rows


def reward_rows() -> list[str]:
    rows = ["| component | reward | when |", "|---|---|---|"]
    rows += [f"| `{name}` | {value:+.2f} | {when} |" for name, (value, when) in REWARD_TABLE.items()]
    return rows


TABLES = {"tasks": task_rows, "rewards": reward_rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--table", choices=[*TABLES, "all"], default="all", help="which table (default: all)")
    parser.add_argument(
        "--check",
        action="store_true",
        help="print nothing if every row stands in the README, else each missing row on stderr and exit 1",
    )
    parser.add_argument(
        "--readme", type=Path, metavar="PATH", default=ROOT / "README.md", help="with --check (default: README.md)"
    )
    args = parser.parse_args(argv)
    tables = [TABLES[args.table]()] if args.table != "all" else [rows() for rows in TABLES.values()]
    if args.check:
        text = args.readme.read_text(encoding="utf-8")
        missing = [row for rows in tables for row in rows if row not in text]
        for row in missing:
            print(f"{args.readme}: stale or missing row: {row}", file=sys.stderr)
        return 1 if missing else 0
    print("\n\n".join("\n".join(rows) for rows in tables))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
