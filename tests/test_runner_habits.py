"""What people do with runs: progress bars, trajectories as JSONL, re-scoring them, PNG plots.

Every run goes through the real CLIs, against real services on loopback ports."""

from __future__ import annotations

import io
import json
import os
import re
import select
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from baseline_agent.progress import BarSafeLines, Progress, wants_bar
from supportenv.actions import Action
from supportenv.catalog import CATEGORIES

ROOT = Path(__file__).resolve().parent.parent
TASKS = ("issue_classification", "action_selection", "end_to_end_resolution")
FIELDS = {"task_id", "split", "seed", "trial", "policy", "actions", "rewards", "score", "passed"}
LOG_LINE = re.compile(
    r"^(\[START\] task=\S+ env=supportenv model=\S+"
    r"|\[STEP\] step=\d+ action=\S+ reward=-?\d+\.\d\d done=(true|false) error=\S+"
    r"|\[END\] success=(true|false) steps=\d+ score=\d\.\d\d rewards=[-\d.,]*)$"
)
BAR = re.compile(r"\d+%\|")  # tqdm's "50%|####  |"
TIMEOUT_S = 120


def _env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name in ("SUPPORTENV_ENV_ADDR", "SUPPORTENV_GRADER_ADDR"):
        env.pop(name, None)
    return env


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *args], capture_output=True, text=True, cwd=ROOT, env=_env(), timeout=TIMEOUT_S
    )


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Two runs written as trajectories: the rule policy on every task, and the random one
    with two trials per seed (so every action kind and the trial field are exercised)."""
    out = tmp_path_factory.mktemp("habits")
    runs = {}
    for policy, extra in (("rule", []), ("random", ["--trials", "2"])):
        jsonl, summary = out / f"{policy}.jsonl", out / f"{policy}.json"
        done = run(
            "baseline_agent",
            "--policy",
            policy,
            "--episodes",
            "2",
            *extra,
            "--trajectories",
            str(jsonl),
            "--json",
            str(summary),
        )
        assert done.returncode == 0, done.stderr
        runs[policy] = (jsonl, json.loads(summary.read_text()), done)
    return runs


# ---- trajectories as JSONL ----


def test_trajectories_have_every_field_and_match_the_summary(saved):
    for policy, (jsonl, summary, _) in saved.items():
        rows = read_jsonl(jsonl)
        trials = 2 if policy == "random" else 1
        assert len(rows) == len(TASKS) * 2 * trials
        episodes = {(e["task_id"], e["seed"], e["trial"]): e for e in summary["episodes"]}
        for row in rows:
            assert set(row) >= FIELDS, set(row)
            assert row["policy"] == policy and row["split"] == "test" and row["error"] is None
            assert row["seed"] in (0, 1) and row["trial"] in range(trials)
            assert len(row["actions"]) == len(row["rewards"]) >= 1
            assert all(Action.from_dict(a).to_dict() == a for a in row["actions"])
            episode = episodes[(row["task_id"], row["seed"], row["trial"])]
            assert (row["score"], row["passed"], row["rewards"]) == (
                episode["score"],
                episode["passed"],
                episode["rewards"],
            )
        assert "actions" not in summary["episodes"][0], "the --json summary keeps its shape"


def test_rescore_through_a_real_grader_gives_identical_scores(saved, services):
    for policy, (jsonl, summary, _) in saved.items():
        done = run("baseline_agent.rescore", str(jsonl), "--grader-addr", services.grader.address)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "re-scores match the recorded scores" in done.stdout
        for task in TASKS:
            mean = summary["tasks"][task]["mean_score"]
            assert re.search(rf"^{policy}\s+test\s+{task}\s+\d+\s+{mean:.3f}\s+{mean:.3f}$", done.stdout, re.M), task


def test_rescore_replays_expert_task_trajectories_with_tool_calls(tmp_path, services):
    jsonl = tmp_path / "expert.jsonl"
    played = run(
        "baseline_agent", "--policy", "oracle", "--tasks", "expert_resolution", "--episodes", "3",
        "--quiet", "--trajectories", str(jsonl),
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    assert any(a["kind"] == "use_tool" and a["arguments"] for row in read_jsonl(jsonl) for a in row["actions"])
    done = run("baseline_agent.rescore", str(jsonl), "--grader-addr", services.grader.address)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "re-scores match the recorded scores" in done.stdout
    bad = read_jsonl(jsonl)[0]
    tool_call = next(a for a in bad["actions"] if a["kind"] == "use_tool")
    tool_call["arguments"] = {"order_id": 123456}
    refused = run("baseline_agent.rescore", str(write_jsonl(tmp_path / "bad.jsonl", [bad])))
    assert refused.returncode == 2 and "arguments must be an object of strings" in refused.stdout + refused.stderr


def test_rescore_starts_its_own_grader_without_an_address(saved):
    done = run("baseline_agent.rescore", str(saved["rule"][0]), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "started embedded grader" in done.stderr


def test_a_changed_score_is_reported_with_its_line(saved, services, tmp_path):
    rows = read_jsonl(saved["rule"][0])
    rows[3]["score"] = 0.123 if rows[3]["score"] != 0.123 else 0.5
    done = run(
        "baseline_agent.rescore", str(write_jsonl(tmp_path / "t.jsonl", rows)), "--grader-addr", services.grader.address
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"^  line 4 \(.*score recorded 0\.1230, re-scored", done.stdout, re.M), done.stdout
    assert "1 of 6 trajectories do not re-score as recorded" in done.stdout


def test_a_changed_action_is_reported_with_its_line(saved, services, tmp_path):
    rows = read_jsonl(saved["rule"][0])
    # (a ticket the rule triaged and scored on: another category must then change its score)
    index = next(i for i, r in enumerate(rows) if r["actions"][0]["kind"] == "classify_issue" and r["score"] > 0.5)
    first = rows[index]["actions"][0]
    first["category"] = next(c for c in CATEGORIES if c != first["category"])
    done = run(
        "baseline_agent.rescore", str(write_jsonl(tmp_path / "t.jsonl", rows)), "--grader-addr", services.grader.address
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(rf"^  line {index + 1} \(.*recorded", done.stdout, re.M), done.stdout
    assert done.stdout.count("  line ") == 1


def test_a_failed_episode_is_listed_but_not_compared(saved, services, tmp_path):
    rows = read_jsonl(saved["rule"][0])
    rows[2].update(error="UNAVAILABLE: the env went away", score=0.0, passed=False)
    path = write_jsonl(tmp_path / "t.jsonl", rows)
    done = run("baseline_agent.rescore", str(path), "--grader-addr", services.grader.address)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^  line 3 \(.*\): UNAVAILABLE: the env went away$", done.stdout, re.M), done.stdout
    assert "re-scored 5 of 6" in done.stdout


def test_malformed_lines_are_named_and_nothing_is_graded(saved, tmp_path):
    good = saved["rule"][0].read_text().splitlines()
    row = json.loads(good[0])
    bad = [
        good[0],
        "{not json",
        json.dumps({k: v for k, v in row.items() if k != "seed"}),
        json.dumps({**row, "actions": [{"kind": "close_ticket"}]}),
        json.dumps({**row, "actions": [{**row["actions"][0], "catgory": "billing"}]}),
        json.dumps({**row, "score": "high"}),
    ]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(bad) + "\n")
    done = run("baseline_agent.rescore", str(path), "--grader-addr", "127.0.0.1:1")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "5 line(s)" in done.stderr and "nothing was re-scored" in done.stderr
    for line, words in (
        (2, "not valid JSON"),
        (3, "missing field(s) seed"),
        (4, "close_ticket"),
        (5, "catgory"),
        (6, "score"),
    ):
        assert re.search(rf"^{re.escape(str(path))}:{line}: .*{re.escape(words)}", done.stderr, re.M), (
            line,
            done.stderr,
        )
    missing = run("baseline_agent.rescore", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr


# ---- progress bars ----


def test_no_bar_when_output_is_not_a_terminal(saved):
    for _, _, done in saved.values():
        assert "\r" not in done.stdout + done.stderr
        assert not BAR.search(done.stderr)
        assert all(LOG_LINE.match(line) for line in done.stdout.splitlines() if line.startswith("["))


def test_the_bar_decision():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    with open(os.devnull, "w") as closed:
        pass
    assert wants_bar(Terminal(), quiet=False)
    assert not wants_bar(Terminal(), quiet=True)
    assert not wants_bar(io.StringIO(), quiet=False)
    assert not wants_bar(closed, quiet=False)
    assert not wants_bar(None, quiet=False)


def test_lines_pass_through_unchanged_without_a_bar():
    target = io.StringIO()
    with Progress(10, enabled=False) as progress:
        stream = BarSafeLines(progress, target)
        print("[START] a", file=stream, flush=True)
        print("[END] b", file=stream, flush=True)
        progress.advance("x")
    assert target.getvalue() == "[START] a\n[END] b\n"


def run_on_pty(args: list[str], stdout_on_pty: bool) -> tuple[int, str, str]:
    """Run `python -m args` with stderr (and optionally stdout) on a pseudo-terminal of
    24x120; return (exit code, what the terminal showed, what went to the stdout pipe)."""
    pty = pytest.importorskip("pty")
    fcntl, termios = pytest.importorskip("fcntl"), pytest.importorskip("termios")
    try:
        master, slave = pty.openpty()
    except OSError as exc:
        pytest.skip(f"no pseudo-terminal here: {exc}")
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", *args],
        stdin=subprocess.DEVNULL,
        stdout=slave if stdout_on_pty else subprocess.PIPE,
        stderr=slave,
        cwd=ROOT,
        env=_env(),
    )
    os.close(slave)
    piped: list[bytes] = []
    reader = None
    if process.stdout is not None:
        reader = threading.Thread(target=lambda: piped.append(process.stdout.read()), daemon=True)  # type: ignore[union-attr]
        reader.start()
    shown = b""
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every writer has closed the terminal
                    break
                if not chunk:
                    break
                shown += chunk
            elif process.poll() is not None:
                break
        else:
            pytest.fail(f"{args} did not finish within {TIMEOUT_S}s")
        code = process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
        if reader is not None:
            reader.join(timeout=30)
    return code, shown.decode(errors="replace"), b"".join(piped).decode(errors="replace")


def test_bar_on_a_terminal_leaves_the_piped_log_clean():
    args = ["baseline_agent", "--episodes", "2", "--tasks", "issue_classification", "action_selection"]
    code, terminal, stdout = run_on_pty(args, stdout_on_pty=False)
    assert code == 0, terminal + stdout
    assert BAR.search(terminal) and "4/4" in terminal, terminal
    assert "\r" not in stdout and stdout.count("[START]") == 4
    assert all(LOG_LINE.match(line) for line in stdout.splitlines() if line.startswith("["))


def test_bar_and_log_on_one_terminal_never_tear_a_line():
    args = ["baseline_agent", "--episodes", "2", "--tasks", "action_selection"]
    code, terminal, _ = run_on_pty(args, stdout_on_pty=True)
    assert code == 0, terminal
    assert BAR.search(terminal), terminal
    # The bar is erased ("\r   \r") before each log line, which then runs whole to its newline.
    pieces = [p for p in re.split(r"[\r\n]+", terminal) if p.startswith("[")]
    assert len([p for p in pieces if p.startswith("[START]")]) == 2
    assert all(LOG_LINE.match(p) for p in pieces), pieces


def test_quiet_means_no_bar_even_on_a_terminal():
    code, terminal, stdout = run_on_pty(
        ["baseline_agent", "--episodes", "2", "--tasks", "issue_classification", "--quiet"], stdout_on_pty=False
    )
    assert code == 0, terminal + stdout
    assert not BAR.search(terminal) and "weighted score" in stdout


def test_scoreboard_bar_on_a_terminal():
    args = ["baseline_agent.scoreboard", "--episodes", "2", "--policies", "rule", "noop"]
    code, terminal, stdout = run_on_pty(args, stdout_on_pty=False)
    assert code == 0, terminal + stdout
    # (two policies x four tasks x two episodes)
    assert BAR.search(terminal) and "16/16" in terminal and "rule: weighted" in terminal
    assert "\r" not in stdout and stdout.startswith("| agent |")


# ---- the scoreboard's PNG ----


def test_scoreboard_png(tmp_path):
    png, summary = tmp_path / "plots" / "scores.png", tmp_path / "scores.json"
    done = run(
        "baseline_agent.scoreboard",
        "--episodes",
        "2",
        "--policies",
        "rule",
        "noop",
        "--png",
        str(png),
        "--json",
        str(summary),
    )
    assert done.returncode == 0, done.stderr
    assert "\r" not in done.stdout + done.stderr and not BAR.search(done.stderr)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert 800 <= width <= 4000 and 400 <= height <= 2000, (width, height)
    assert len(data) > 20_000, "a chart with text and bars, not an empty canvas"
    assert set(json.loads(summary.read_text())) == {"rule", "noop"}
