"""Every shell and Python block of README.md is run, as a reader would run it.

What runs. Fenced blocks whose language is `bash`, `sh`, `shell` or `console` (bash, with
`-euo pipefail`; a `console` block runs its `$ ` lines and ignores the output lines) or `python`
(the virtualenv's `python -c`). Blocks of any other language (`proto`, `text`, ...) and blocks
with none (the diagram, sample output, the layout) are not commands and are not run;
`test_unlabelled_blocks_are_not_commands` keeps a command from hiding in one. Each block is one
test, named by its nearest heading and its place under it (`without-make-1`), and its failure
names the block by README line, shows its text and its output (shell blocks also say which line
failed: `README.md:80: exit status 1 from: ...`).

Where. Each block runs in a fresh copy of the repository (`tmp_path/repo`): the files git knows
of in ROOT (tracked, and untracked but not ignored) as they are in ROOT's working tree. In CI,
a clean clone, that is exactly the commit; locally it is what you are about to commit, so an
uncommitted fix counts and an ignored file (`out/`, `node_modules/`) is never there. The copy's
`.venv` is a symlink to the virtualenv running the tests and PATH starts with its `bin/`, so
`python`, `pip` and `openenv` are the virtualenv's (`. .venv/bin/activate` works literally), and
the environment is a fresh shell's: no `SUPPORTENV_*`, no model endpoint, no PYTHONPATH. A block
gets an empty stdin, 90 s, and at its end every process still in its session (servers it
started with `&`) is stopped: only those, as the block runs in a session of its own.

Markers, HTML comments (invisible on GitHub) each on its own line, right above the fence:

    <!-- readme-test: skip (needs a Docker engine) -->  not runnable here: reported as skipped
        with the reason (a marker without one fails); it must still parse (`bash -n`, compile).
    <!-- readme-test: services -->  the test serves env on 127.0.0.1:50051 and grader on
        127.0.0.1:50052 while the block runs (`services openenv`: the OpenEnv adapter on
        127.0.0.1:8000). Every other block runs with those ports free, so a block that needs a
        service and lacks the marker fails rather than passing by accident.
    <!-- readme-test: stdin TEXT -->  TEXT (`\\n` is a newline) is what the reader types.
    <!-- readme-test: needs node npm -->  skipped, saying so, when a command is not on PATH
        (for tools the rest of the suite also treats as optional).

Debugging: `README_BLOCKS_FILE=/tmp/README.md pytest tests/test_readme_blocks.py -k without-make`
runs another copy's blocks (in copies of ROOT's repository); `-rs` shows the skip reasons.
About 90 s in all on a 2-core machine when every block passes (the Progress block's scoreboard
about 30 s, Ray about 15 s, the rest seconds each); a block that hangs adds its 90 s.
"""

from __future__ import annotations

import ast
import contextlib
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from baseline_agent.embedded import ServiceProcess, start_service

ROOT = Path(__file__).resolve().parent.parent
README = Path(os.environ.get("README_BLOCKS_FILE") or ROOT / "README.md")
BLOCK_TIMEOUT = 90.0
SHELL_LANGUAGES = {"bash", "sh", "shell", "console"}
PYTHON_LANGUAGES = {"python"}
RUN_LANGUAGES = SHELL_LANGUAGES | PYTHON_LANGUAGES
# What the README's addresses say; `services NAME ...` names these.
PORTS = {"env": 50051, "grader": 50052, "openenv": 8000}
DEFAULT_SERVICES = ("env", "grader")
# A fresh shell has none of these: the developer's own settings must not make a block pass.
DROPPED_ENV = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "RAY_ADDRESS", "LLM_TOOL_CALLS"}
DROPPED_ENV |= {"API_BASE_URL", "MODEL_NAME", "HF_TOKEN", "API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"}
OUTPUT_TAIL = 150  # lines of a failed block's output shown

FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)[^`]*$")
MARKER = re.compile(r"^\s*<!--\s*readme-test:\s*(?P<directive>.*?)\s*-->\s*$")
ANY_MARKER = re.compile(r"<!--\s*readme-test:")
HEADING = re.compile(r"^#{1,6}\s+(?P<title>.+?)\s*#*\s*$")
PORT_IN_TEXT = re.compile(r"(?:127\.0\.0\.1|localhost|0\.0\.0\.0):(\d{2,5})\b|--port[ =](\d{2,5})\b")
# First words of a command: an unlabelled block must not start like one.
COMMAND_START = re.compile(
    r"^\s*(\$ |python3? |\.venv/|\. |source |make |pip3? |npm |node |docker |kubectl |curl |grpcurl |export |cd |git )"
)


class BlockError(AssertionError):
    """A README block that did not run: the message names it and shows why."""


@dataclass(frozen=True)
class Options:
    skip: str | None = None
    services: tuple[str, ...] = ()
    stdin: str | None = None
    needs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    section: str  # the nearest heading above it
    index: int  # 1-based, among the run-language blocks of its section
    lang: str
    text: str
    directives: tuple[str, ...] = ()
    marker_lines: tuple[int, ...] = ()

    @property
    def id(self) -> str:
        return f"{slugify(self.section)}-{self.index}"

    @property
    def where(self) -> str:
        return f"{self.path.name}:{self.line} [{self.id}] (under {self.section!r}, a {self.lang} block)"

    def options(self) -> Options:
        """The markers above the block, read; a bad one fails the block's test."""
        skip, services, stdin, needs = None, (), None, ()
        for directive, line in zip(self.directives, self.marker_lines, strict=True):
            problem = None
            if directive.startswith("skip"):
                found = re.fullmatch(r"skip\s*\((?P<reason>.*)\)", directive)
                if not found or not found["reason"].strip():
                    problem = "a skip marker needs a reason, e.g. <!-- readme-test: skip (needs a Docker engine) -->"
                else:
                    skip = found["reason"].strip()
            elif directive.split()[:1] == ["services"]:
                services = tuple(directive.split()[1:]) or DEFAULT_SERVICES
                unknown = sorted(set(services) - set(PORTS))
                if unknown:
                    problem = f"unknown services {unknown}; known: {sorted(PORTS)}"
            elif directive.split()[:1] == ["needs"] and len(directive.split()) > 1:
                needs = tuple(directive.split()[1:])
            elif directive.startswith("stdin "):
                stdin = directive[len("stdin ") :].replace("\\n", "\n") + "\n"
            else:
                problem = "unknown directive; known: skip (REASON), services [NAME ...], stdin TEXT, needs CMD ..."
            if problem:
                raise BlockError(f"{self.path.name}:{line}: marker {directive!r} above {self.where}: {problem}")
        return Options(skip, services, stdin, needs)

    def script(self) -> str:
        """What runs: the block's text; a console block's output lines become blank lines (so
        line numbers stay), its `$ ` lines the commands."""
        if self.lang != "console":
            return self.text
        lines, continued = [], False
        for line in self.text.splitlines():
            if continued or line.startswith("$ ") or line == "$":
                command = line if continued else line[2:]
                lines.append(command)
                continued = command.endswith("\\")
            else:
                lines.append("")
        return "\n".join(lines) + "\n"


@dataclass
class Unattached:
    """A marker that does not sit right above a block that runs: it would silently do nothing."""

    line: int
    text: str
    why: str


@dataclass
class Parsed:
    blocks: list[Block] = field(default_factory=list)  # run-language blocks, in order
    unlabelled: list[Block] = field(default_factory=list)  # blocks with no language
    stray_markers: list[Unattached] = field(default_factory=list)


def slugify(title: str) -> str:
    """The heading's anchor, as GitHub makes it."""
    slug = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return slug.replace(" ", "-") or "top"


def parse(path: Path) -> Parsed:
    lines = path.read_text(encoding="utf-8").splitlines()
    parsed, section, per_section = Parsed(), "top", {}
    pending: list[tuple[int, str]] = []  # markers right above the current line
    i = 0
    while i < len(lines):
        line, number = lines[i], i + 1
        opened = FENCE.match(line)
        if opened:
            fence = opened["fence"]
            end = i + 1
            while end < len(lines) and not lines[end].strip().startswith(fence[0] * len(fence)):
                end += 1
            lang = opened["lang"].lower()
            directives = tuple(d for _, d in pending)
            marker_lines = tuple(n for n, _ in pending)
            text = "\n".join(lines[i + 1 : end]) + "\n"
            if lang in RUN_LANGUAGES:
                per_section[section] = per_section.get(section, 0) + 1
                parsed.blocks.append(
                    Block(path, number, section, per_section[section], lang, text, directives, marker_lines)
                )
            else:
                for n, d in pending:
                    parsed.stray_markers.append(Unattached(n, d, f"its block is {lang or 'unlabelled'}, not run"))
                if not lang:
                    parsed.unlabelled.append(Block(path, number, section, 0, lang, text))
            pending = []
            i = end + 1
            continue
        marker = MARKER.match(line)
        if marker:
            pending.append((number, marker["directive"]))
        else:
            for n, d in pending:
                parsed.stray_markers.append(Unattached(n, d, "not on the line right above a fence"))
            pending = []
            if ANY_MARKER.search(line):
                parsed.stray_markers.append(
                    Unattached(number, line.strip(), "not a whole-line <!-- readme-test: ... -->")
                )
            heading = HEADING.match(line)
            if heading:
                section = heading["title"]
        i += 1
    for n, d in pending:
        parsed.stray_markers.append(Unattached(n, d, "at the end of the file, above no block"))
    return parsed


# ---- running a block ----


@dataclass
class Result:
    status: int | None  # None: timed out
    output: str
    seconds: float
    running: str = ""  # a shell block's command that was running last (README.md:LINE: command)


def copy_repository(dest: Path, root: Path = ROOT) -> Path:
    """The files git knows of in `root` (tracked, and untracked but not ignored), as they are in
    its working tree, with mtimes kept (so make's stamps hold); `.venv` links to the virtualenv."""
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
    )
    if listed.returncode == 0:
        for name in sorted(set(filter(None, listed.stdout.split("\0")))):
            source = root / name
            if source.is_file() or source.is_symlink():  # a tracked file deleted in the tree is skipped
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, dest / name, follow_symlinks=False)
    else:  # not a git checkout: everything but the usual untracked output
        ignored = shutil.ignore_patterns(".git", ".venv", "out", "node_modules", "__pycache__", ".*_cache")
        shutil.copytree(root, dest, ignore=ignored, symlinks=True)
    return link_venv(dest, root)


def link_venv(dest: Path, root: Path = ROOT) -> Path:
    """`dest/.venv`: a link to the virtualenv running the tests (else ROOT's)."""
    venv = Path(sys.prefix) if sys.prefix != sys.base_prefix else root / ".venv"
    (dest / ".venv").symlink_to(venv, target_is_directory=True)
    return dest


def block_environment(workdir: Path) -> dict[str, str]:
    """A fresh shell's environment, the copy's virtualenv first on PATH."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in DROPPED_ENV and not key.startswith(("SUPPORTENV_", "PYTEST_"))
    }
    env["PATH"] = os.pathsep.join([str(workdir / ".venv" / "bin"), env.get("PATH", os.defpath)])
    env["VIRTUAL_ENV"] = str(workdir / ".venv")
    return env


def _session_members(session: int) -> list[int]:
    """Processes in `session` (Linux: /proc), the block's bash included if still there."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[3]) == session and fields[0] != "Z":
                members.append(int(entry.name))
    return members


def stop_session(session: int, grace: float = 5.0) -> None:
    """SIGTERM every process of the block's session (only those: the block made the session),
    then SIGKILL what is left after `grace` seconds."""
    if not Path("/proc/self/stat").exists():  # not Linux: the process group is what we know
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(session, sig)
            except ProcessLookupError:
                return
            time.sleep(grace / 5)
        return
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
        members = _session_members(session)
        if not members:
            return
        for pid in members:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and _session_members(session):
            time.sleep(0.05)


def run_block(block: Block, workdir: Path, scratch: Path, stdin: str | None, timeout: float = BLOCK_TIMEOUT) -> Result:
    """Run the block in `workdir` (scratch: a folder outside it for the script and its output)."""
    scratch.mkdir(parents=True, exist_ok=True)
    env = block_environment(workdir)
    running = scratch / "running.txt"
    if block.lang in SHELL_LANGUAGES:
        # Line N of the script is line N of the README (blank lines before the block), so bash's
        # own messages and the traps' lines say where in the README: the ERR trap names the
        # command that failed, the DEBUG trap keeps the one running (for a timeout).
        where = f"{block.path.name}:$LINENO"
        traps = (
            f"__running={shlex.quote(str(running))}; "
            f"trap '__status=$?; echo \"{where}: exit status $__status from: $BASH_COMMAND\" >&2' ERR; "
            f'trap \'if [[ ${{BASH_SOURCE[0]:-}} == "$0" ]]; then '
            f'printf "%s\\n" "{where}: $BASH_COMMAND" > "$__running"; fi\' DEBUG\n'
        )
        script = scratch / block.path.name
        script.write_text(traps + "\n" * (block.line - 1) + block.script())
        command = ["bash", "-euo", "pipefail", str(script)]
    else:  # the same for a traceback's `File "<string>", line N`
        command = [str(workdir / ".venv" / "bin" / "python"), "-c", "\n" * block.line + block.text]
    stdin_file = scratch / "stdin.txt"
    stdin_file.write_text(stdin or "")
    output_file = scratch / "output.txt"
    started = time.monotonic()
    with stdin_file.open("rb") as given, output_file.open("wb") as output:
        process = subprocess.Popen(
            command, cwd=workdir, env=env, stdin=given, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            status: int | None = process.wait(timeout)
        except subprocess.TimeoutExpired:
            status = None
        finally:
            stop_session(process.pid)
            process.wait()
    last = running.read_text().strip() if running.exists() else ""
    return Result(status, output_file.read_text(errors="replace"), time.monotonic() - started, last)


def failure_message(block: Block, result: Result, timeout: float) -> str:
    if result.status is None:
        what = f"did not finish within {timeout:.0f} s"
        if result.running:
            what += f", still running {result.running}"
    else:
        what = f"exited with status {result.status} after {result.seconds:.1f} s"
    numbered = "\n".join(f"{block.line + k:5} | {text}" for k, text in enumerate(block.text.splitlines(), 1))
    tail = result.output.splitlines()[-OUTPUT_TAIL:]
    note = ""
    if block.lang in PYTHON_LANGUAGES:
        note = f' (a traceback\'s `File "<string>", line N` is {block.path.name} line N)'
    return (
        f"{block.where} {what}.\n"
        f"The block:\n{numbered}\n"
        f"Its output (stdout and stderr, last {OUTPUT_TAIL} lines){note}:\n" + "\n".join(tail)
    )


def check_syntax(block: Block) -> None:
    """A block that cannot run here must still be a command a reader can paste."""
    if block.lang in SHELL_LANGUAGES:
        done = subprocess.run(["bash", "-n"], input=block.script(), capture_output=True, text=True)
        problem = done.stderr.strip() if done.returncode else None
    else:
        try:
            ast.parse(block.text)
            problem = None
        except SyntaxError as exc:
            problem = str(exc)
    if problem:
        raise BlockError(
            f"{block.where} is marked skip but is not valid {block.lang}: {problem}\n"
            "A usage synopsis (HOST:PORT, <model id>, ...) belongs in a ```text block; "
            "a command to edit before use needs its placeholders quoted."
        )


def port_in_use(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class Services:
    """The services the README's addresses name, on those ports, for the blocks marked so."""

    def __init__(self) -> None:
        self.running: dict[str, ServiceProcess] = {}
        self.token_key = secrets.token_hex(32)

    def provide(self, names: tuple[str, ...]) -> None:
        for name in [n for n in self.running if n not in names]:
            self.running.pop(name).stop()
        for name in names:
            if name not in self.running:
                self.running[name] = self._start(name)

    def _start(self, name: str) -> ServiceProcess:
        port = PORTS[name]
        if port_in_use(port):
            pytest.fail(
                f"port {port} (the README's {name} address, 127.0.0.1:{port}) is taken by a process this test "
                "did not start: stop it and run again"
            )
        if name == "env":
            return start_service("env_service", {"SUPPORTENV_TOKEN_KEY": self.token_key}, port=port)
        if name == "grader":
            return start_service("grader_service", port=port)
        from openenv_adapter.health_probe import wait_healthy

        return start_service(
            "openenv_adapter", port=port, timeout=60, wait_ready=lambda a: wait_healthy(f"http://{a}/health", 60)
        )

    def close(self) -> None:
        self.provide(())


def run_readme_block(
    block: Block,
    tmp_path: Path,
    services: Services | None,
    workdir: Path | None = None,
    timeout: float = BLOCK_TIMEOUT,
) -> Result:
    """One block's whole test: its markers, the services it needs, a fresh copy (or `workdir`),
    the run and the verdict. Raises pytest's skip for a skip marker, BlockError when it fails."""
    options = block.options()
    missing = [command for command in options.needs if shutil.which(command) is None]
    if missing:
        options = Options(skip=f"needs {' and '.join(missing)}, not on PATH")
    if options.skip:
        check_syntax(block)
        pytest.skip(f"{block.path.name}:{block.line} [{block.id}]: {options.skip}")
    if services is not None:
        services.provide(options.services)
    served = {PORTS[name] for name in options.services}
    for found in PORT_IN_TEXT.finditer(block.text):
        port = int(found[1] or found[2])
        if port not in served and port_in_use(port):
            raise BlockError(
                f"{block.where} uses port {port}, which a process this test did not start holds: "
                "stop it and run again (or, if the block needs a service, mark it <!-- readme-test: services -->)"
            )
    if workdir is None:
        workdir = copy_repository(tmp_path / "repo")
    result = run_block(block, workdir, tmp_path / "scratch", options.stdin, timeout)
    if result.status != 0:
        raise BlockError(failure_message(block, result, timeout))
    return result


# ---- the README's blocks ----

PARSED = parse(README)


@pytest.fixture(scope="module")
def readme_services():
    running = Services()
    try:
        yield running
    finally:
        running.close()


# `make test` runs the suite on both builds at once (tools/test_both_builds.py). A block runs in a copy of
# the checkout, which the compiled build's import hook leaves to the pure build, so the compiled build's
# pass already runs every block on the pure build; and the blocks use the README's fixed ports, which two
# passes at once could not share. So the pure build's pass leaves them to it.
_PURE_PASS = os.environ.get("SUPPORTENV_EXPECT_BUILD") == "pure"


@pytest.mark.skipif(
    _PURE_PASS, reason="the compiled build's pass runs the README's blocks, in a copy: on the pure build"
)
@pytest.mark.parametrize("block", PARSED.blocks, ids=[block.id for block in PARSED.blocks])
def test_readme_block(block, readme_services, tmp_path):
    try:
        run_readme_block(block, tmp_path, readme_services)
        return
    except BlockError as failed:
        message = str(failed)
    pytest.fail(message, pytrace=False)  # the message says it all: no traceback of the runner


def test_every_marker_sits_on_a_block_that_runs():
    assert not PARSED.stray_markers, "\n".join(
        f"{README.name}:{m.line}: marker {m.text!r}: {m.why}" for m in PARSED.stray_markers
    )


def test_unlabelled_blocks_are_not_commands():
    """A block with no language is not run, so it must be no command (give it `bash`)."""
    commands = [b for b in PARSED.unlabelled if any(COMMAND_START.match(line) for line in b.text.splitlines()[:1])]
    assert not commands, "\n".join(f"{b.where} looks like a command: label it ```bash" for b in commands)


def test_the_ids_name_each_block_once():
    ids = [block.id for block in PARSED.blocks]
    assert len(ids) == len(set(ids)), ids


# ---- the runner itself, on a small README of its own ----

FAKE = """# Fake

## Works

```bash
echo fine > made.txt
sleep 300 &
echo $! > background.pid
```

## Breaks here

```bash
echo before
no_such_command_readme_test --flag
echo never
```

```python
import sys
print("from python")
sys.exit(3)
```

<!-- readme-test: skip -->
```bash
echo a marker without a reason
```

<!-- readme-test: skip (needs a Docker engine) -->
```sh
docker compose up
```

<!-- readme-test: skip (placeholders) -->
```bash
export MODEL_NAME=<model id>
```

<!-- readme-test: stdin hello\\nworld -->
```bash
read first && read second && test "$first $second" = "hello world"
```

```console
$ echo typed
typed
```

```bash
sleep 30
```

<!-- readme-test: needs no-such-tool-readme-test -->
```bash
no-such-tool-readme-test
```

<!-- readme-test: services -->

```text
a stray marker above
```

```
python -m env_service --port 50051
```
"""


@pytest.fixture
def fake(tmp_path):
    path = tmp_path / "README.md"
    path.write_text(FAKE)
    return {block.id: block for block in parse(path).blocks}


def _run(block: Block, tmp_path: Path, name: str, timeout: float = BLOCK_TIMEOUT) -> Result:
    workdir = tmp_path / name
    workdir.mkdir()
    link_venv(workdir)
    return run_readme_block(block, tmp_path / f"{name}-scratch", None, workdir, timeout)


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_runner_parses_ids_markers_and_strays(tmp_path):
    path = tmp_path / "README.md"
    path.write_text(FAKE)
    parsed = parse(path)
    assert [b.id for b in parsed.blocks] == ["works-1"] + [f"breaks-here-{n}" for n in range(1, 10)]
    assert [b.lang for b in parsed.blocks][:3] == ["bash", "bash", "python"]
    stray = FAKE.splitlines().index("<!-- readme-test: services -->") + 1
    assert [(m.line, m.why) for m in parsed.stray_markers] == [(stray, "not on the line right above a fence")]
    assert len(parsed.unlabelled) == 1 and COMMAND_START.match(parsed.unlabelled[0].text)


def test_runner_passes_a_good_block_and_stops_what_it_left_running(fake, tmp_path):
    result = _run(fake["works-1"], tmp_path, "good")
    assert result.status == 0
    assert (tmp_path / "good" / "made.txt").read_text() == "fine\n"
    background = int((tmp_path / "good" / "background.pid").read_text())
    assert not _alive(background), "the block's background process is stopped with it"


def test_runner_fails_a_broken_block_naming_it_and_the_line(fake, tmp_path):
    with pytest.raises(BlockError) as failed:
        _run(fake["breaks-here-1"], tmp_path, "bad")
    message = str(failed.value)
    assert message.startswith("README.md:13 [breaks-here-1] (under 'Breaks here', a bash block) exited with status 127")
    assert "   15 | no_such_command_readme_test --flag" in message
    assert "README.md:15: exit status 127 from: no_such_command_readme_test --flag" in message
    output = message.partition("Its output")[2]
    assert "before" in output and "never" not in output
    assert "README.md: line 15: no_such_command_readme_test: command not found" in output


def test_runner_fails_a_python_block_with_its_output(fake, tmp_path):
    with pytest.raises(BlockError) as failed:
        _run(fake["breaks-here-2"], tmp_path, "python")
    assert "[breaks-here-2]" in str(failed.value) and "exited with status 3" in str(failed.value)
    assert "from python" in str(failed.value)


def test_a_skip_marker_needs_a_reason_and_skips_with_it(fake, tmp_path):
    with pytest.raises(BlockError, match="a skip marker needs a reason"):
        _run(fake["breaks-here-3"], tmp_path, "no-reason")
    with pytest.raises(pytest.skip.Exception, match=r"README.md:\d+ \[breaks-here-4\]: needs a Docker engine"):
        _run(fake["breaks-here-4"], tmp_path, "docker")
    with pytest.raises(BlockError, match="marked skip but is not valid bash"):
        _run(fake["breaks-here-5"], tmp_path, "synopsis")
    with pytest.raises(pytest.skip.Exception, match=r"\[breaks-here-9\]: needs no-such-tool-readme-test, not on PATH"):
        _run(fake["breaks-here-9"], tmp_path, "needs")


def test_stdin_console_and_timeout(fake, tmp_path):
    assert _run(fake["breaks-here-6"], tmp_path, "stdin").status == 0
    assert "typed" in _run(fake["breaks-here-7"], tmp_path, "console").output
    started = time.monotonic()
    with pytest.raises(
        BlockError, match=r"\[breaks-here-8\] .* did not finish within 1 s, still running README.md:\d+: sleep 30"
    ):
        _run(fake["breaks-here-8"], tmp_path, "slow", timeout=1.0)
    assert time.monotonic() - started < 10
