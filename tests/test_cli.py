"""The command lines at the front door: every one names itself as a user types it, answers
--help, stops without a traceback when its reader leaves (`| head`) or on Ctrl-C, and the
README's options and examples are the ones the code has."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from terminal import as_at_a_terminal

from baseline_agent.policies import POLICIES

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
PY = sys.executable
HELP_TIMEOUT_S = 180  # ray and openenv imports are slow on a busy 2-core machine
RUN_TIMEOUT_S = 120

# Every command line of the project: (file, how a user runs it).
CLIS = {
    "env_service/__main__.py": "python -m env_service",
    "env_service/keygen.py": "python -m env_service.keygen",
    "grader_service/__main__.py": "python -m grader_service",
    "baseline_agent/__main__.py": "python -m baseline_agent",
    "baseline_agent/rescore.py": "python -m baseline_agent.rescore",
    "baseline_agent/scoreboard.py": "python -m baseline_agent.scoreboard",
    "baseline_agent/ray_rollouts.py": "python -m baseline_agent.ray_rollouts",
    "supportenv/play.py": "python -m supportenv.play",
    "supportenv/mcp/__main__.py": "python -m supportenv.mcp",
    "supportenv/world/__main__.py": "python -m supportenv.world",
    "supportenv/v1/health_probe.py": "python -m supportenv.v1.health_probe",
    "training/__main__.py": "python -m training",
    "openenv_adapter/__main__.py": "python -m openenv_adapter",
    "openenv_adapter/health_probe.py": "python -m openenv_adapter.health_probe",
    "tools/readme_tables.py": "python tools/readme_tables.py",
    "tools/protogen.py": "python tools/protogen.py",
    "tools/compiled_build.py": "python tools/compiled_build.py",
    "tools/test_both_builds.py": "python tools/test_both_builds.py",
    "tools/build_digest.py": "python tools/build_digest.py",
    "benchmarks/bench_world.py": "python benchmarks/bench_world.py",
    "benchmarks/bench_grpc_floor.py": "python benchmarks/bench_grpc_floor.py",
    "benchmarks/bench_handler.py": "python benchmarks/bench_handler.py",
    "benchmarks/bench_throughput.py": "python benchmarks/bench_throughput.py",
    "benchmarks/bench_builds.py": "python benchmarks/bench_builds.py",
    "benchmarks/soak.py": "python benchmarks/soak.py",
    "inference.py": "python inference.py",
}
STDLIB_ONLY = {"openenv_adapter/health_probe.py"}  # a container healthcheck: imports no library
# Command lines of another venv, which this one cannot import (verifiers 0.4: .venv/verifiers-v1);
# tests/test_verifiers_v1.py runs them there.
OTHER_VENV = {
    "integrations/verifiers_v1/smoke.py": "python integrations/verifiers_v1/smoke.py",
    # The taskset's tool server, which verifiers starts itself (python -m supportenv_verifiers_v1.toolset).
    "integrations/verifiers_v1/supportenv_verifiers_v1/toolset.py": "python -m supportenv_verifiers_v1.toolset",
}


def cli_param(path: str) -> object:
    return pytest.param(path, id=path)


def argv(command: str) -> list[str]:
    """`python -m x` -> [this python, -m, x]: the same command, run by the test's interpreter."""
    return [PY, *command.split()[1:]]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.kill()
        process.wait(30)


@pytest.fixture(scope="module")
def helps() -> dict[str, tuple[int, str, str]]:
    """`--help` of every CLI, run all at once: {file: (exit code, stdout, stderr)}."""
    started = {
        path: subprocess.Popen(
            [*argv(command), "--help"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for path, command in CLIS.items()
    }
    done: dict[str, tuple[int, str, str]] = {}
    try:
        for path, process in started.items():
            out, err = process.communicate(timeout=HELP_TIMEOUT_S)
            done[path] = (process.returncode, out, err)
    finally:
        for process in started.values():
            stop(process)
    return done


def test_every_command_line_is_listed():
    """A file with a __main__ block is a CLI, and this module checks it."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "*.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split("\0")
    found = set()
    for name in filter(None, tracked):
        if name.startswith("tests/") or not (ROOT / name).is_file():
            continue
        text = (ROOT / name).read_text(encoding="utf-8")
        if re.search(r'^if __name__ == "__main__":', text, re.M):
            found.add(name)
    listed = set(CLIS) | set(OTHER_VENV)
    assert found == listed, f"unlisted: {sorted(found - listed)}, gone: {sorted(listed - found)}"


@pytest.mark.parametrize("path", [cli_param(p) for p in CLIS])
def test_help_names_the_real_command(helps, path):
    code, out, err = helps[path]
    assert code == 0, err[-2000:]
    assert "Traceback" not in err, err[-2000:]
    assert out.startswith(f"usage: {CLIS[path]} "), out.splitlines()[:1]


@pytest.mark.parametrize("path", [cli_param(p) for p in CLIS])
def test_every_command_line_stops_quietly(path):
    """Its __main__ block goes through supportenv.cli.run_cli (no traceback on `| head` or Ctrl-C)."""
    text = (ROOT / path).read_text(encoding="utf-8")
    block = text.split('if __name__ == "__main__":', 1)[-1]
    if path in STDLIB_ONLY:  # the same handling, inline
        assert "except KeyboardInterrupt:" in block and "sys.exit(130)" in block, path
        assert not re.search(r"^(from|import) (?!__future__)(?!argparse|json|sys|time|urllib)", text, re.M), path
        return
    assert "run_cli(" in block, f"{path}: end with sys.exit(run_cli(main, PROG))"


# --- a reader that leaves, and Ctrl-C ----------------------------------------------------


def read_until(stream, pattern: str, timeout: float = RUN_TIMEOUT_S) -> str:
    """The first line of `stream` matching `pattern` (a thread reads, so a silent process cannot hang us)."""
    found: list[str] = []
    ready = threading.Event()

    def read() -> None:
        for line in stream:
            if re.search(pattern, line):
                found.append(line)
                break
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    assert ready.wait(timeout) and found, f"no line matching {pattern!r} within {timeout:.0f}s"
    return found[0]


def embedded_ports(line: str) -> list[int]:
    """The ports of `started embedded services: env HOST:PORT, grader HOST:PORT`."""
    return [int(port) for port in re.findall(r":(\d+)", line)]


def closed_early(command: list[str]) -> tuple[int, str]:
    """Run `command`, read its first stdout line, then close the pipe, as `| head -1` does."""
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stderr is not None
        assert read_until(process.stdout, ".")
        process.stdout.close()
        err = process.stderr.read()
        process.wait(RUN_TIMEOUT_S)
        return process.returncode, err
    finally:
        stop(process)


def test_world_stops_quietly_when_its_reader_leaves():
    code, err = closed_early([PY, "-m", "supportenv.world", "--seeds", "0:20000", "--jsonl"])
    assert code in (1, 141), err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert err == "", err


def test_agent_stops_quietly_when_its_reader_leaves():
    code, err = closed_early([PY, "-m", "baseline_agent", "--episodes", "500"])
    assert code in (1, 141), err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    for port in embedded_ports(err.splitlines()[0]):
        assert not listening(port), "the embedded services are stopped"


def interrupt(command: list[str], started: str, group: bool = False, stream: str = "stdout") -> tuple[int, str]:
    """Start `command`, wait for a line matching `started`, then Ctrl-C: SIGINT to the process,
    or with `group` to its whole process group, as a terminal does. (exit code, stderr)."""
    process = subprocess.Popen(
        as_at_a_terminal(command),  # (SIGINT at its default, as a terminal's foreground job has it)
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=group,
    )
    try:
        line = read_until(getattr(process, stream), started)
        if group:
            os.killpg(process.pid, signal.SIGINT)
        else:
            process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=RUN_TIMEOUT_S)
        return process.returncode, (line if stream == "stderr" else "") + err
    finally:
        stop(process)


def assert_interrupted(code: int, err: str, prog: str) -> None:
    assert code == 130, err[-2000:]
    assert "Traceback" not in err, err[-2000:]
    assert err.strip().splitlines()[-1] == f"{prog}: interrupted", err[-2000:]


def test_ctrl_c_stops_the_world_printer():
    code, err = interrupt([PY, "-m", "supportenv.world", "--seeds", "0:1000000", "--jsonl"], ".")
    assert_interrupted(code, err, "python -m supportenv.world")
    assert err == "python -m supportenv.world: interrupted\n"  # one short line


@pytest.mark.parametrize("group", [False, True], ids=["process", "process-group"])
def test_ctrl_c_stops_the_agent_and_its_services(group):
    command = [PY, "-m", "baseline_agent", "--episodes", "5000", "--quiet"]
    code, err = interrupt(command, "started embedded services", group=group, stream="stderr")
    assert_interrupted(code, err, "python -m baseline_agent")
    for port in embedded_ports(err.splitlines()[0]):
        assert not listening(port), "the embedded services are stopped"


def test_ctrl_c_in_a_terminal_stops_training_workers_without_tracebacks(tmp_path):
    """Every process of the group gets SIGINT; the pool's workers leave the answer to the parent."""
    command = [PY, "-m", "training", "--seeds", "2", "--episodes", "100000", "--out", str(tmp_path), "--no-plot"]
    code, err = interrupt(command, r"^seed \d+: episodes", group=True)
    assert_interrupted(code, err, "python -m training")


# --- the LLM policy names the endpoint it cannot reach -----------------------------------


def test_llm_policy_names_the_endpoint_it_cannot_reach():
    pytest.importorskip("openai")
    from baseline_agent.llm_policy import EndpointUnreachableError, LLMPolicy

    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    policy = LLMPolicy(model="m", base_url=url, max_retries=0, timeout_s=10)
    with pytest.raises(EndpointUnreachableError) as raised:
        policy.complete([{"role": "user", "content": "hello"}])
    message = str(raised.value)
    assert url in message and "API_BASE_URL" in message, message
    assert "Connection refused" in message, message


def test_llm_run_against_a_closed_port_says_where_and_what_to_set():
    pytest.importorskip("openai")
    url = f"http://127.0.0.1:{free_port()}/v1"
    env = {**os.environ, "API_BASE_URL": url, "MODEL_NAME": "some-model"}
    command = [PY, "-m", "baseline_agent", "--policy", "llm", "--tasks", "issue_classification", "--episodes", "1"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    failed = done.stderr.strip().splitlines()[-1]
    assert failed.startswith("1 episode(s) failed; first: EndpointUnreachableError: "), failed
    assert f"cannot reach the model endpoint {url} (API_BASE_URL)" in failed, failed


# --- the README says what the code does --------------------------------------------------


def test_readme_documents_every_option(helps):
    """Each option in --help of the agent, the services, the scoreboard and rescore stands in the
    README, written as `--option` (or `--a/--b`)."""
    for path in (
        "baseline_agent/__main__.py",
        "baseline_agent/scoreboard.py",
        "baseline_agent/rescore.py",
        "env_service/__main__.py",
        "grader_service/__main__.py",
    ):
        options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", helps[path][1])) - {"--help"}
        missing = sorted(option for option in options if not re.search(rf"[`/]{option}(?![a-z-])", README))
        assert not missing, f"{CLIS[path]}: README lacks {missing}"


def test_readme_lists_every_policy():
    assert f"--policy {{{','.join(POLICIES)}}}" in README


def test_readme_shows_the_ready_line_a_service_prints(tmp_path):
    process = subprocess.Popen(
        [PY, "-m", "env_service", "--host", "127.0.0.1", "--port", "0", "--workers", "2"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = read_until(process.stdout, "listening on").strip()
    finally:
        process.terminate()
        process.wait(30)
        stop(process)
    assert re.fullmatch(r"env_service listening on 127\.0\.0\.1:\d+ \(2 workers\)", line), line
    assert "`env_service listening on HOST:PORT (N workers)`" in README


def readme_block(section: str, language: str) -> str:
    body = README.split(section, 1)[1]
    match = re.search(rf"```{language}\n(.*?)```", body, re.S)
    assert match, f"no {language} block under {section}"
    return match.group(1)


def test_readme_in_process_example_runs_and_plays_its_ticket_well():
    code = readme_block("### In-process, no server at all", "python")
    done = subprocess.run([PY, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "invoice" in lines[0]  # the ticket the example's triage names
    assert lines[-1] == "True 1.0 True", lines


@pytest.mark.skipif(not (ROOT / ".venv" / "bin" / "activate").is_file(), reason="needs the project's .venv")
def test_readme_without_make_runs_as_written(tmp_path):
    """The section's commands, in bash from the repository root, on free ports instead of 50051/50052
    (which may be taken here); every process it starts is in one process group, stopped at the end."""
    env_port, grader_port = free_port(), free_port()
    script = readme_block("### Without Make", "bash").replace("50051", str(env_port)).replace("50052", str(grader_port))
    script = script.replace("out/rule.json", str(tmp_path / "rule.json"))
    environment = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    process = subprocess.Popen(
        ["bash", "-e", "-c", script],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=2 * RUN_TIMEOUT_S)
        left_running = listening(env_port) or listening(grader_port)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # anything it left running
        stop(process)
    assert process.returncode == 0, err[-3000:]
    assert re.search(rf"^env_service listening on 0\.0\.0\.0:{env_port}( \(\d+ workers\))?$", out, re.M), out[:2000]
    assert f"grader_service listening on 0.0.0.0:{grader_port}\n" in out
    assert out.count("weighted score") == 2, out[-3000:]  # the agent's table, then inference.py's
    assert (tmp_path / "rule.json").is_file()
    assert "Traceback" not in err, err[-3000:]
    assert not left_running, "the section stops its services"
