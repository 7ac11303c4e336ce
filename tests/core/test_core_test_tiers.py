"""The README's test command is the quick tier: it must never select a slow test."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _readme_test_command() -> list[str]:
    text = (ROOT / "README.md").read_text()
    commands = re.findall(r"python -m pytest[^\n`&|]*", text)
    assert commands, "README.md names no pytest command"
    return shlex.split(commands[0])[3:]  # the arguments after "python -m pytest"


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
