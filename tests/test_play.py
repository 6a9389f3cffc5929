"""`python -m supportenv.play`, run as a real command: both modes, the prompts it shows, the grade
it ends with, and its errors."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from supportenv import expert
from supportenv.actions import INVALID_KIND, Action
from supportenv.catalog import TOOL_KIND
from supportenv.episode import advance, observe
from supportenv.graders import grade_trajectory
from supportenv.llm import ACTION_SPECS, parse_action, render_prompt
from supportenv.replay import new_episode
from supportenv.tasks import ALL_TASK_IDS, TASK_IDS

ROOT = Path(__file__).resolve().parent.parent
HARD = "end_to_end_resolution"
SPLIT = "validation"
ERROR = "python -m supportenv.play: error: "


def play(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "supportenv.play", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
    )


def as_reply(action: Action) -> str:
    """The action as a model writes it, under the prompt's parameter names (free text under the
    action's own name: message, question, reason, note or summary)."""
    values = {
        "category": action.category,
        "priority": action.priority,
        "issue_type": action.issue_type,
        "fields": list(action.fields),
        "article_id": action.article_id,
        "department": action.department,
    }
    reply: dict[str, object] = {"action": action.kind}
    if action.kind == TOOL_KIND:
        reply.update(tool=action.tool, arguments=dict(action.arguments))
    for name in ACTION_SPECS.get(action.kind, ("", {}))[1]:
        value = values.get(name, action.text)
        if value:
            reply[name] = value
    text = json.dumps(reply)
    assert parse_action(text) == action
    return text


def expert_game(task_id: str, seed: int) -> tuple[list[str], list[list[dict[str, str]]], list[Action]]:
    """The expert's replies, the prompt before each of them, and its actions, from the library."""
    scenario, state = new_episode(task_id, SPLIT, seed)
    replies, prompts, actions = [], [], []
    while not state.done:
        prompts.append(render_prompt(observe(scenario, state)))
        action = expert.expert_action(scenario, state, task_id)
        replies.append(as_reply(action))
        actions.append(action)
        advance(scenario, state, action)
    return replies, prompts, actions


def write_replies(tmp_path: Path, replies: list[str]) -> str:
    path = tmp_path / "replies.txt"
    path.write_text("".join(f"{reply}\n\n" for reply in replies))  # blank lines are ignored
    return str(path)


@pytest.mark.parametrize("task_id", ALL_TASK_IDS)
def test_an_expert_episode_from_a_replies_file_gets_the_graders_grade(tmp_path, task_id):
    seed = 2
    replies, _, actions = expert_game(task_id, seed)
    grade = grade_trajectory(task_id, SPLIT, seed, actions)
    path = write_replies(tmp_path, replies)

    done = play("--task", task_id, "--split", SPLIT, "--seed", str(seed), "--replies", path, "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["done"] and document["messages"] is None
    assert document["grade"] == json.loads(json.dumps(dataclasses.asdict(grade)))
    assert [s["reward"] for s in document["steps"]] == list(grade.rewards)
    assert [s["reply"] for s in document["steps"]] == replies
    assert [Action.from_dict(s["action"]) for s in document["steps"]] == actions
    for report in document["steps"]:
        assert sum(part["value"] for part in report["breakdown"]) == pytest.approx(report["reward"])

    text = play("--task", task_id, "--split", SPLIT, "--seed", str(seed), "--replies", path)
    assert text.returncode == 0, text.stderr
    out = text.stdout
    assert f"Score {grade.score:.3f}: {'passed' if grade.passed else 'not passed'}" in out
    for component in grade.components:
        assert f"{component.name}" in out and component.detail in out
    assert "EPISODE ENDED" in out and "terminated: the ticket was marked resolved" in out
    assert "USER PROMPT" not in out  # no next decision after the end


def test_the_next_prompt_is_render_prompt_of_the_librarys_observation(tmp_path):
    seed = 5
    replies, prompts, _ = expert_game(HARD, seed)
    for given in (0, 1, len(replies) - 1):
        path = write_replies(tmp_path, replies[:given])
        document = json.loads(play("--seed", str(seed), "--replies", path, "--json").stdout)
        assert not document["done"] and document["grade"] is None
        assert document["messages"] == prompts[given]

        system, user = (message["content"] for message in prompts[given])
        out = play("--seed", str(seed), "--replies", path).stdout
        assert f"============\n{user}\n\n============ NEXT" in out  # verbatim, between two headings
        assert (system in out) == (given == 0)  # the rules come with the first decision only...
        assert system in play("--seed", str(seed), "--replies", path, "--system").stdout  # ...or on request


def test_an_unparseable_reply_is_a_penalised_invalid_step(tmp_path):
    path = tmp_path / "replies.txt"
    path.write_text("I think we should classify this as billing.\n")
    document = json.loads(play("--replies", str(path), "--json").stdout)
    (report,) = document["steps"]
    assert report["action"]["kind"] == INVALID_KIND
    assert report["action"]["error"].startswith("the reply contains no JSON object")
    assert [part["name"] for part in report["breakdown"]] == ["invalid_action"]
    assert report["reward"] < 0 and report["feedback"].startswith("your last output did not parse")
    assert document["messages"][1]["content"].count("your last output did not parse") == 1

    out = play("--replies", str(path)).stdout
    assert "Parsed:   invalid (the reply contains no JSON object" in out
    assert "invalid_action" in out and "(the customer did not reply)" in out


def test_replies_from_stdin(tmp_path):
    replies, prompts, _ = expert_game(HARD, 1)
    done = play("--seed", "1", "--replies", "-", "--json", stdin="\n".join(replies[:2]) + "\n")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["messages"] == prompts[2]


def test_interactive_play_through_stdin():
    seed = 4
    replies, prompts, actions = expert_game(HARD, seed)
    grade = grade_trajectory(HARD, SPLIT, seed, actions)
    first = json.dumps(json.loads(replies[0]), indent=2)  # a reply may span lines; an empty line ends it
    typed = "\n\n" + first + "\n\n" + "".join(f"{reply}\n\n" for reply in replies[1:])
    done = play("--seed", str(seed), stdin=typed)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    system = prompts[0][0]["content"]
    assert out.count(system) == 1  # the rules once, then each decision's observation
    for messages in prompts:
        assert messages[1]["content"] in out
    assert out.count("YOUR REPLY") == len(replies)
    assert f"============ Step {len(replies)} ============" in out
    assert f"Score {grade.score:.3f}" in out

    stopped = play("--seed", str(seed), stdin=replies[0] + "\n")
    assert stopped.returncode == 1
    assert "Input ended at step 1, before the episode did; nothing was graded." in stopped.stdout


def test_list_tasks():
    done = play("--list-tasks")
    assert done.returncode == 0
    for task_id in TASK_IDS:
        assert task_id in done.stdout


def test_bad_input_is_one_clear_line_and_exit_2(tmp_path):
    replies, _, _ = expert_game(HARD, 0)
    finished = write_replies(tmp_path, [*replies, replies[-1]])
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    cases = {
        ("--task", "nope"): "unknown task 'nope'",
        ("--split", "dev"): "unknown split 'dev'",
        ("--seed", "-1"): "seed must be an integer from 0",
        ("--seed", "x"): "argument --seed: invalid int value: 'x'",
        ("--replies", str(tmp_path / "missing.txt")): "cannot read the replies file",
        ("--replies", str(tmp_path)): "cannot read the replies file",
        ("--replies", str(binary)): "it is not UTF-8 text",
        ("--replies", finished, "--seed", "0"): f"{finished}:{2 * len(replies) + 1}: a reply after the episode ended",
        ("--json",): "--system and --json go with --replies FILE",
    }
    for args, message in cases.items():
        done = play(*args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert done.stderr.startswith(ERROR) and message in done.stderr, (args, done.stderr)
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert done.stdout == ""


# ---- the expert task: use_tool and the help desk's tools ----

EXPERT = "expert_resolution"


def expert_task_replies(seed: int) -> list[str]:
    """A plausible expert-task game as replies: gather the facts (with the account email and an
    identity proof), classify, look the order up, make the case's changes, answer, close."""
    from supportenv import casework

    scenario, _ = new_episode(EXPERT, SPLIT, seed)
    exp = scenario.expected
    fields = list(dict.fromkeys((*exp.facts, "account_email", "order_id")))
    replies = [
        json.dumps({"action": "ask_for_more_info", "fields": fields, "question": "Could you share these, please?"}),
        json.dumps(
            {
                "action": "classify_issue",
                "category": exp.category,
                "priority": exp.priority,
                "issue_type": exp.issue_type,
            }
        ),
        json.dumps({"action": "use_tool", "tool": "check_service_status", "arguments": {}}),
    ]
    for call in casework.remedy_calls(scenario):
        replies.append(json.dumps({"action": "use_tool", "tool": call.name, "arguments": dict(call.arguments)}))
    replies.append(json.dumps({"action": "respond_with_solution", "message": "Thank you, I have sorted this for you."}))
    replies.append(json.dumps({"action": "mark_resolved", "summary": "done"}))
    return replies


def test_the_oracles_expert_game_passes_and_shows_every_tool_result(tmp_path):
    seed = 4
    replies, _, actions = expert_game(EXPERT, seed)
    assert any(a.kind == TOOL_KIND for a in actions)
    out = play("--task", EXPERT, "--seed", str(seed), "--replies", write_replies(tmp_path, replies)).stdout
    grade = grade_trajectory(EXPERT, SPLIT, seed, actions)
    assert grade.passed and f"Score {grade.score:.3f}: passed" in out
    for action in actions:
        if action.kind == TOOL_KIND:
            assert f"Tool result: {action.tool}: " in out


def test_help_documents_the_expert_task_use_tool_and_every_tool():
    from supportenv.tools import TOOLS

    done = play("--help")
    assert done.returncode == 0
    out = done.stdout
    assert EXPERT in out and '{"action": "use_tool", "tool": "issue_refund", "arguments": {' in out
    for spec in TOOLS:
        assert f"{spec.name}({', '.join(spec.arguments)})" in out, spec.name
    listed = play("--list-tasks").stdout
    assert EXPERT in listed and "issue_refund(order_id, amount)*" in listed


@pytest.mark.parametrize("seed", [2, 3])
def test_an_expert_task_episode_plays_to_the_end_with_tool_results(tmp_path, seed):
    replies = expert_task_replies(seed)
    path = write_replies(tmp_path, replies)
    done = play("--task", EXPERT, "--seed", str(seed), "--replies", path, "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["done"] and [s["reply"] for s in document["steps"]] == replies
    actions = [Action.from_dict(s["action"]) for s in document["steps"]]
    assert all(a.kind != INVALID_KIND for a in actions), [s["action"] for s in document["steps"]]
    tool_steps = [s for s in document["steps"] if s["action"]["kind"] == "use_tool"]
    assert tool_steps and all(s["tool_result"]["status"] in ("ok", "not_found", "refused") for s in tool_steps)
    assert all(s["tool_result"] is None for s in document["steps"] if s["action"]["kind"] != "use_tool")
    assert tool_steps[0]["tool_result"]["tool"] == "check_service_status"
    assert "incidents" in tool_steps[0]["tool_result"]["data"]
    grade = grade_trajectory(EXPERT, SPLIT, seed, actions)
    assert document["grade"] == json.loads(json.dumps(dataclasses.asdict(grade))) and "grade_error" not in document

    out = play("--task", EXPERT, "--seed", str(seed), "--replies", path).stdout
    assert "Actions this task takes: " in out and ", use_tool" in out
    assert "Tools (use_tool): look_up_customer(account_email)" in out
    assert "Tool result: check_service_status: ok: " in out
    assert "EPISODE ENDED" in out and "============ GRADE ============" in out
    assert f"Score {grade.score:.3f}" in out and "No grade" not in out


def test_the_next_expert_prompt_shows_the_tool_result(tmp_path):
    replies = expert_task_replies(3)[:3]  # ask, classify, check_service_status
    document = json.loads(
        play("--task", EXPERT, "--seed", "3", "--replies", write_replies(tmp_path, replies), "--json").stdout
    )
    system, user = (m["content"] for m in document["messages"])
    assert "- use_tool: " in system and "- issue_refund(order_id, amount): " in system
    assert "Result of your last tool call" in user and "- check_service_status: ok: " in user


def test_interactive_expert_play_through_stdin():
    replies = expert_task_replies(2)
    done = play("--task", EXPERT, "--seed", "2", stdin="".join(f"{reply}\n\n" for reply in replies))
    assert done.returncode == 0, done.stderr
    assert "or, to call a tool," in done.stdout and "Tool result: " in done.stdout
    assert done.stdout.count("YOUR REPLY") == len(replies) and "EPISODE ENDED" in done.stdout


def test_use_tool_on_a_source_task_is_a_penalised_invalid_step(tmp_path):
    path = write_replies(tmp_path, ['{"action": "use_tool", "tool": "check_service_status", "arguments": {}}'])
    done = play("--task", HARD, "--replies", path, "--json")
    assert done.returncode == 0, done.stderr
    (report,) = json.loads(done.stdout)["steps"]
    assert report["action"]["kind"] == INVALID_KIND and "does not take use_tool" in report["action"]["error"]
    assert report["reward"] < 0 and report["tool_result"] is None
    assert "Tools (use_tool)" not in play("--task", HARD, "--replies", path).stdout


def test_a_reward_part_that_counts_several_says_how_many():
    """A part paid per fact or per issue shows its count and rate beside its total, so +0.30 is
    not read as the rate of "per needed fact revealed"."""
    from supportenv.play import _meaning
    from supportenv.rewards import REWARD_TABLE

    rate, when = REWARD_TABLE["ask_new_fact"]
    assert _meaning("ask_new_fact", rate) == when
    assert _meaning("ask_new_fact", 3 * rate) == f"3 x +{rate:.2f}: {when}"
    assert _meaning("no_such_part", 0.3) == ""
