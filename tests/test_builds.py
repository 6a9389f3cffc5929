"""The two builds of the library: compiled with mypyc, and pure Python (supportenv.compiled).

`make test` runs the whole suite on each (tools/test_both_builds.py); this file checks that each
pass runs the build it says, that the builds agree byte for byte over 2,000 mixed episodes,
that every public record pickles and copies on both, and that a stale or foreign compiled
build is never loaded in place of the source.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import importlib.machinery
import json
import os
import pickle
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import supportenv
from supportenv import casework
from supportenv.actions import Action
from supportenv.compiled import COMPILED_SOURCES, PURE_ENV, module_name, wants_pure
from supportenv.env import SupportEnv
from supportenv.expert import expert_action
from supportenv.graders import grade_state
from supportenv.replay import new_episode
from supportenv.tasks import ALL_TASKS, EXPERT_TASK_ID, get_task
from supportenv.tools import Desk
from supportenv.v1 import codec
from supportenv.world import generate

ROOT = Path(__file__).resolve().parent.parent
EXPECT_ENV = "SUPPORTENV_EXPECT_BUILD"
BUILD_TOOL = ROOT / "tools" / "compiled_build.py"
sys.path.insert(0, str(ROOT / "tools"))
import compiled_finder  # noqa: E402


def _compiled_build_installed() -> bool:
    return subprocess.run([sys.executable, str(BUILD_TOOL), "--check"], capture_output=True).returncode == 0


def _build_in_a_new_process(env: dict[str, str]) -> str:
    code = "import supportenv; print(supportenv.build())"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout


def test_the_build_installed_is_the_build_that_runs_here_and_in_new_processes() -> None:
    """The compiled build where it is installed and fresh (make test builds it), unless SUPPORTENV_PURE;
    a pass of tools/test_both_builds.py says which it must be (SUPPORTENV_EXPECT_BUILD)."""
    installed = "pure" if wants_pure(os.environ) or not _compiled_build_installed() else "compiled"
    expected = os.environ.get(EXPECT_ENV) or installed
    assert supportenv.build() == expected
    assert _build_in_a_new_process(dict(os.environ)).strip() == expected
    # Every compiled module of a compiled pass is the compiled one (none left to its source).
    for source in COMPILED_SOURCES:
        module = sys.modules.get(module_name(source)) or __import__(module_name(source), fromlist=["_"])
        compiled = isinstance(module.__loader__, importlib.machinery.ExtensionFileLoader)
        assert compiled == (expected == "compiled"), source


def test_supportenv_pure_chooses_the_pure_build_in_any_process() -> None:
    assert wants_pure({PURE_ENV: "1"}) and wants_pure({PURE_ENV: "yes"})
    assert not wants_pure({}) and not wants_pure({PURE_ENV: "0"}) and not wants_pure({PURE_ENV: ""})
    assert _build_in_a_new_process({**os.environ, PURE_ENV: "1"}).strip() == "pure"


@pytest.mark.skipif(wants_pure(os.environ), reason="the compiled build's pass compares both builds (make test runs it)")
def test_both_builds_agree_byte_for_byte_over_2000_mixed_episodes() -> None:
    """Transcripts, observations, rewards and breakdowns, grades, states, and the wire bytes of
    every ResetResponse, StepResponse and GradeResponse, tokens included (tools/build_digest.py)."""
    if not _compiled_build_installed():
        pytest.skip("no compiled build is installed (make compiled; make test builds it)")
    digest = [sys.executable, str(ROOT / "tools" / "build_digest.py"), "--episodes", "2000"]
    base = {k: v for k, v in os.environ.items() if k != PURE_ENV}
    # (both at once: one core each)
    started = {
        name: subprocess.Popen(digest, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name, env in (("compiled", base), ("pure", {**base, PURE_ENV: "1"}))
    }
    runs = {}
    for name, process in started.items():
        out, err = process.communicate(timeout=600)
        assert process.returncode == 0, err[-2000:]
        runs[name] = json.loads(out)
    assert runs["compiled"]["build"] == "compiled" and runs["pure"]["build"] == "pure"
    assert runs["compiled"]["episodes"] == 2000 and runs["compiled"]["steps"] > 5000
    assert runs["compiled"]["digest"] == runs["pure"]["digest"]
    assert runs["compiled"]["steps"] == runs["pure"]["steps"]


def test_build_digest_plays_every_task_and_split() -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    import build_digest

    plan = build_digest.episodes(2000)
    assert {(t, s) for t, s, _, _ in plan} == {(t.task_id, s) for t in ALL_TASKS for s in build_digest.SPLITS}
    assert {p for _, _, p, _ in plan} == set(build_digest.POLICIES)


def _public_records() -> list[object]:
    """One of every public record a user of the library meets, from an expert episode played through."""
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", 3)
    results = []
    while not state.done:
        from supportenv.episode import step

        results.append(step(scenario, state, expert_action(scenario, state, EXPERT_TASK_ID)))
    records = scenario.records
    env = SupportEnv(EXPERT_TASK_ID, "test", 5)
    observation = env.reset()
    check = casework.check_records(scenario, state.desk)
    found = [
        scenario,
        scenario.briefing,
        scenario.expected,
        scenario.issue,
        scenario.policy,
        state,
        observation,
        results[-1],
        results[0].observation,
        grade_state(scenario, state),
        grade_state(scenario, state).components[0],
        get_task(EXPERT_TASK_ID),
        Action(kind="classify_issue", category="billing", priority="high"),
        records,
        records.account,
        *records.orders[:1],
        *records.payments[:1],
        *records.refunds[:1],
        *records.subscriptions[:1],
        *records.incidents[:1],
        state.desk,
        *state.desk.changes[:1],
        check,
        *casework.remedies(scenario)[:1],
        *casework.findings(scenario)[:1],
        Desk(),
    ]
    return found


def _same(a: object, b: object) -> bool:
    if dataclasses.is_dataclass(a) and not isinstance(a, type) and not a.__dataclass_params__.eq:
        return repr(a) == repr(b)  # a record compared by identity (the episode state): by its contents
    return a == b and repr(a) == repr(b)


def test_every_public_record_pickles_and_copies_on_this_build() -> None:
    records = _public_records()
    assert len({type(r) for r in records}) >= 20
    for record in records:
        name = type(record).__name__
        assert _same(pickle.loads(pickle.dumps(record)), record), name
        assert _same(copy.copy(record), record), name
        assert _same(copy.deepcopy(record), record), name


def test_a_copied_episode_state_goes_on_as_the_original() -> None:
    scenario, state = new_episode("end_to_end_resolution", "test", 11)
    twin = copy.deepcopy(state)
    from supportenv.episode import step

    for _ in range(3):
        action = expert_action(scenario, state, "end_to_end_resolution")
        assert step(scenario, state, action) == step(scenario, twin, action)
    assert repr(state) == repr(twin)
    again = pickle.loads(pickle.dumps(generate("issue_classification", "train", 4)))
    assert codec.briefing_bytes(again.briefing) == codec.briefing_bytes(
        generate("issue_classification", "train", 4).briefing
    )


def test_the_mypy_settings_hold_every_compiled_module_to_full_typing() -> None:
    settings = (ROOT / "pyproject.toml").read_text()
    blocks = settings.split("[[tool.mypy.overrides]]")[1:]
    strict = [b for b in blocks if re.search(r"^disallow_untyped_defs = true$", b, re.M)]
    assert len(strict) == 1
    listed = re.findall(r'"([\w.]+)"', strict[0].split("]", 1)[0])
    assert sorted(listed) == sorted(module_name(s) for s in COMPILED_SOURCES)
    assert re.search(r'^requires = \[.*"mypy==[\d.]+".*\]$', settings, re.M), "mypy pinned for the build"


def _manifest(tmp_path: Path, source_text: str, built_text: str) -> dict:
    package = tmp_path / "checkout" / "fakepkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text(source_text)
    extension = tmp_path / "lib" / ("mod" + importlib.machinery.EXTENSION_SUFFIXES[0])
    return {
        "source_root": str(tmp_path / "checkout"),
        "group_module": "fake__mypyc",
        "modules": {
            "fakepkg.mod": {
                "source": "fakepkg/mod.py",
                "sha256": hashlib.sha256(built_text.encode()).hexdigest(),
                "extension": str(extension),
                "package": False,
            }
        },
    }


def _package_at(path: Path) -> object:
    module = type(sys)("fakepkg")
    module.__path__ = [str(path)]  # type: ignore[attr-defined]
    return module


def test_the_import_hook_loads_a_fresh_build_of_this_checkout(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv(PURE_ENV, raising=False)  # (the pure pass sets it, and the hook then steps aside)
    finder = compiled_finder.CompiledFinder(_manifest(tmp_path, "x = 1\n", "x = 1\n"))
    monkeypatch.setitem(sys.modules, "fakepkg", _package_at(tmp_path / "checkout" / "fakepkg"))
    spec = finder.find_spec("fakepkg.mod")
    assert spec is not None and isinstance(spec.loader, importlib.machinery.ExtensionFileLoader)
    assert finder.find_spec("fakepkg.other") is None  # not compiled: the source's finder's


def test_the_import_hook_never_loads_a_stale_build(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv(PURE_ENV, raising=False)
    finder = compiled_finder.CompiledFinder(_manifest(tmp_path, "x = 2  # edited\n", "x = 1\n"))
    monkeypatch.setitem(sys.modules, "fakepkg", _package_at(tmp_path / "checkout" / "fakepkg"))
    assert finder.find_spec("fakepkg.mod") is None
    assert finder.find_spec("fakepkg.mod") is None
    said = capsys.readouterr().err
    assert said.count("fakepkg/mod.py has changed since the compiled build; running the pure build") == 1


def test_the_import_hook_leaves_another_checkout_alone(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv(PURE_ENV, raising=False)
    finder = compiled_finder.CompiledFinder(_manifest(tmp_path, "x = 1\n", "x = 1\n"))
    other = tmp_path / "another-checkout" / "fakepkg"
    other.mkdir(parents=True)
    monkeypatch.setitem(sys.modules, "fakepkg", _package_at(other))
    assert finder.find_spec("fakepkg.mod") is None


def test_the_pure_wheel_builds_from_the_project_files(tmp_path: Path) -> None:
    """setup.py under SUPPORTENV_PURE=1 builds the project's wheel with no extension module (the
    compiled wheel is the same build with mypyc; the Docker image's build stage makes it)."""
    for name in ("pyproject.toml", "setup.py", "README.md"):
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    for package in ("supportenv", "env_service", "grader_service", "baseline_agent"):
        files = [p for p in (ROOT / package).rglob("*.py") if "__pycache__" not in p.parts]
        for path in files:
            target = tmp_path / path.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", "dist", "."],
        cwd=tmp_path,
        env={**os.environ, PURE_ENV: "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("supportenv-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "supportenv/episode.py" in names and "env_service/tokens.py" in names and "supportenv/compiled.py" in names
    assert not [n for n in names if n.endswith((".so", ".pyd"))]


def test_the_import_hook_steps_aside_under_supportenv_pure(tmp_path: Path, monkeypatch) -> None:
    finder = compiled_finder.CompiledFinder(_manifest(tmp_path, "x = 1\n", "x = 1\n"))
    monkeypatch.setitem(sys.modules, "fakepkg", _package_at(tmp_path / "checkout" / "fakepkg"))
    monkeypatch.setenv(PURE_ENV, "1")
    assert finder.find_spec("fakepkg.mod") is None


@pytest.mark.skipif(
    wants_pure(os.environ) or not _compiled_build_installed(),
    reason="the compiled build's pass runs it (and without a compiled build, make test runs one pass)",
)
def test_make_test_runs_each_pass_on_its_own_build(tmp_path: Path) -> None:
    """tools/test_both_builds.py, as `make test` runs it, on this file's first test: each pass asserts
    its build (SUPPORTENV_PURE set around it does not reach the compiled pass)."""
    log = tmp_path / "pure.log"
    command = [sys.executable, str(ROOT / "tools" / "test_both_builds.py"), "--workers", "0", "--pure-log", str(log)]
    test = "tests/test_builds.py::test_the_build_installed_is_the_build_that_runs_here_and_in_new_processes"
    done = subprocess.run(
        [*command, test, "-q"], cwd=ROOT, env={**os.environ, PURE_ENV: "1"}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "compiled build passed, pure build passed" in done.stdout
    assert re.search(r"^1 passed", log.read_text(), re.M)
    assert "tools/test_both_builds.py" in _make_recipe("test")


def _make_recipe(target: str) -> str:
    text = (ROOT / "Makefile").read_text()
    return re.search(rf"^{target}:.*\n((?:\t.*\n)+)", text, re.M).group(1)
