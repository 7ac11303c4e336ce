"""The README is the contract: its set-up and test commands are what CI runs first
(``.ci/run`` reads them with ``.ci/readme_commands.py``), its test command is the quick tier
and never selects a slow test, and the quick tier collects without the optional extras."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _setup_commands() -> list[str]:
    sys.path.insert(0, str(ROOT / ".ci"))
    try:
        from readme_commands import setup_commands
    finally:
        sys.path.remove(str(ROOT / ".ci"))
    return setup_commands((ROOT / "README.md").read_text())


def _readme_test_command() -> list[str]:
    commands = [c for c in _setup_commands() if "python -m pytest" in c]
    assert commands, "README.md's Set up section names no pytest command"
    tail = commands[0].split("python -m pytest", 1)[1]
    return shlex.split(tail.split("&&")[0])  # the arguments after "python -m pytest"


def test_readme_setup_section_holds_the_install_and_test_commands():
    """What ``.ci/run`` runs first: the base install with a first run, then the test extra
    with the quick tier, and nothing that installs an optional extra the tier needs."""
    install, tests = _setup_commands()
    assert install.startswith("pip install -e . ") and "graphclust run" in install
    assert '".[test]"' in tests and "python -m pytest -q tests contrib" in tests
    assert not re.search(r"dask|docs|plot", tests.split("&&")[0]), tests


def test_ci_runs_the_readme_commands_verbatim_before_the_extras():
    """Each README command is a line of ``.ci/run`` as written, before any extra is
    installed; the script checks the same itself before running them."""
    script = (ROOT / ".ci" / "run").read_text()
    extras_step = script.index('pip install --quiet -e ".[test,plot,docs,dask]"')
    lines = [line.strip() for line in script[:extras_step].splitlines()]
    for command in _setup_commands():
        assert command in lines, f".ci/run does not run {command!r} as written"
    assert "python .ci/readme_commands.py --check .ci/run" in lines
    assert "--run-slow tests contrib" in script[extras_step:]


#: Modules of the optional extras, hidden from the subprocess of the test below.
_EXTRAS = ("dask", "distributed", "dask_ml", "zarr", "pyarrow", "sphinx", "numpydoc")
_HIDE = f"""
import importlib.abc, sys
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {_EXTRAS!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (hidden by the test)")
sys.meta_path.insert(0, Hide())
import pytest
sys.exit(pytest.main(sys.argv[1:]))
"""


@pytest.mark.slow  # one collection of the whole suite, ~10 s
def test_quick_tier_collects_without_the_optional_extras():
    """The README installs only ``[test]``: with dask, distributed, zarr, pyarrow and Sphinx
    hidden, every test module still collects (those that need an extra skip with a reason)."""
    out = subprocess.run([sys.executable, "-c", _HIDE, "--collect-only", "-q",
                          "-p", "no:cacheprovider", *_readme_test_command()], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert " error" not in out.stdout.splitlines()[-1], out.stdout[-3000:]


def _collect(*args: str) -> set[str]:
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                          "-p", "no:cacheprovider", *args], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode in (0, 5), out.stdout[-2000:] + out.stderr[-2000:]
    return {line.strip() for line in out.stdout.splitlines() if "::" in line}


@pytest.mark.slow
def test_readme_command_selects_no_slow_test():
    """Collects twice (the quick tier as the README writes it, and the slow tier), so it
    lives in the slow tier itself; `.ci/run` runs it on every push."""
    args = [a for a in _readme_test_command() if a != "-q"]
    quick = _collect(*args)
    slow = _collect(*args, "--run-slow", "-m", "slow")
    assert quick, "the quick tier selects nothing"
    assert slow, "no test is marked slow: the tiers are not wired"
    assert not quick & slow, f"the README's command selects slow tests: {sorted(quick & slow)[:5]}"


def test_slow_marker_is_declared():
    text = (ROOT / "pyproject.toml").read_text()
    assert '"slow:' in text and "--strict-markers" in text


def test_readme_python_example_runs(tmp_path, monkeypatch):
    """The README's usage example is code users paste: it must run as written."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    code = re.search(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1)
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)  # noqa: S102 - our own README
    assert scope["labels"].shape == (1797,)
    assert (tmp_path / "report.png").stat().st_size > 20_000
