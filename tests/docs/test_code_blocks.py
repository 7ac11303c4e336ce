"""Every code block of README.md and docs/**/*.rst runs as written.

Each document's blocks run in order as one script in a subprocess, in a temporary
directory: its Python blocks as they are, its console blocks' ``graphclust`` commands
through the shell at their place in the order (under ``if __name__ == "__main__":``, so
Dask's worker processes, which import the script, do not run them). So a snippet that
uses a name it never defines, reads a file it never made or crashes as a script fails
here, not in a reader's hands.

Which blocks
------------
Python: ``python`` / ``py`` fences, ``.. code-block:: python``, and literal ``::`` blocks
that parse as Python and call, import or assign something. Console: ``bash`` / ``sh`` /
``shell`` fences and ``.. code-block:: console`` / ``bash``; their commands are the ``$ ``
lines (a trailing ``\\`` continues one), or every non-comment line of a fence without
prompts. Of a command, the ``&&``-joined pieces that call ``graphclust`` run; ``pip install``
pieces do not (they need the network, and CI has installed the package already), nor do
other tools (``python -m pytest``, ``build``, ``twine``): a console block left with no
``graphclust`` command is reported as skipped with its commands. A ``toml`` fence whose
first line is a comment naming a file (``# my.toml``) is written to that file, as the
reader would save it.

Markers, on the nearest non-blank line above a block (for a ``::`` block, above its
paragraph):

* ``.. not-run: reason`` (reST comment) / ``<!-- not-run: reason -->`` (Markdown): an
  illustrative fragment (a piece of a plugin's module, a command for a cluster address);
  it is reported as a skipped test with the reason, never silently dropped;
* ``.. slow-run: reason`` / ``<!-- slow-run: reason -->``: runs in the slow tier
  (``--run-slow``), in a script of the document's slow blocks; blocks after it must not
  depend on it.

The documents run in the slow tier (about a minute in all, a subprocess per document);
the quick tier checks that every document's blocks are found and every skip is listed.

``STAND_INS`` are the reader's own files some commands name (``my.csv``); they are
written into the temporary directory first.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
PYTHON = {"python", "py", "python3"}
CONSOLE = {"console", "bash", "sh", "shell", "shell-session"}
MARKER_RST = re.compile(r"^\.\. (not-run|slow-run):\s*(.*)$")
MARKER_MD = re.compile(r"^<!--\s*(not-run|slow-run):\s*(.*?)\s*-->$")


@dataclass
class Block:
    path: Path
    line: int  # 1-based line of the block's first code line
    kind: str  # "python", "console" or "file" (a toml block naming its file)
    code: str
    marker: str | None = None  # "not-run" or "slow-run"
    reason: str = ""

    @property
    def label(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    def commands(self) -> list[str]:
        """A console block's commands: ``$ `` lines (continued with a trailing ``\\``), or
        every non-comment line when no line has a prompt (a shell fence)."""
        lines = self.code.splitlines()
        prompted = any(ln.startswith("$ ") for ln in lines)
        out: list[str] = []
        cont = False
        for ln in lines:
            if cont:
                out[-1] = out[-1][:-1].rstrip() + " " + ln.strip()
            elif prompted and ln.startswith("$ "):
                out.append(ln[2:].strip())
            elif not prompted and ln.strip() and not ln.lstrip().startswith("#"):
                out.append(ln.strip())
            else:
                continue
            cont = out[-1].endswith("\\")
        return out


FILE_NAME = re.compile(r"^#\s*([\w.-]+\.toml)\s*$")


def _kind(lang: str, body: list[str]) -> str | None:
    if lang in PYTHON:
        return "python"
    if lang in CONSOLE:
        return "console"
    if lang == "toml" and body and FILE_NAME.match(body[0].strip()):
        return "file"
    return None


def _marker(lines: list[str], i: int, pattern) -> tuple[str | None, str]:
    """The marker on the nearest non-blank line above line ``i`` (0-based)."""
    j = i - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    if j >= 0:
        m = pattern.match(lines[j].strip())
        if m:
            return m.group(1), m.group(2)
    return None, ""


def markdown_blocks(path: Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        lang, start = m.group(1).lower(), i
        i += 1
        body = []
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        kind = _kind(lang, body)
        if kind:
            marker, reason = _marker(lines, start, MARKER_MD)
            out.append(Block(path, start + 2, kind, "\n".join(body) + "\n", marker, reason))
    return out


def _indented_body(lines: list[str], i: int) -> tuple[list[str], int]:
    """The block after line ``i`` (a directive or a paragraph ending in ``::``): the lines
    indented deeper than line ``i``, less the directive's ``:option:`` lines and the
    blank lines around; returns them dedented and the index of the first."""
    depth = len(lines[i]) - len(lines[i].lstrip())
    j = i + 1
    while j < len(lines) and (not lines[j].strip() or lines[j].lstrip().startswith(":")):
        j += 1
    first, body, indent = j, [], None
    while j < len(lines):
        ln = lines[j]
        if ln.strip():
            cur = len(ln) - len(ln.lstrip())
            if cur <= depth:
                break
            indent = cur if indent is None else min(indent, cur)
        body.append(ln)
        j += 1
    while body and not body[-1].strip():
        body.pop()
    return [ln[indent:] if ln.strip() else "" for ln in body], first


def _looks_like_python(code: str) -> bool:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    return any(isinstance(n, (ast.Call, ast.Import, ast.ImportFrom, ast.Assign))
               for n in ast.walk(tree))


def rst_blocks(path: Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    for i, ln in enumerate(lines):
        m = re.match(r"^\s*\.\. code-block::\s*(\S+)", ln)
        literal = (not m and ln.rstrip().endswith("::") and not ln.lstrip().startswith("..")
                   and not ln.lstrip().startswith(":"))
        if not (m or literal):
            continue
        body, start = _indented_body(lines, i)
        if m:
            kind = _kind(m.group(1).lower(), body)
        if not body:
            continue
        code = "\n".join(body) + "\n"
        if literal:
            kind = "python" if _looks_like_python(code) else None
            anchor = i
            while anchor > 0 and lines[anchor - 1].strip():  # the paragraph's first line
                anchor -= 1
        else:
            anchor = i
        if kind:
            marker, reason = _marker(lines, anchor, MARKER_RST)
            out.append(Block(path, start + 1, kind, code, marker, reason))
    return out


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.rst"))]


def blocks_of(path: Path) -> list[Block]:
    return markdown_blocks(path) if path.suffix == ".md" else rst_blocks(path)


# -- running them ----------------------------------------------------------------------

def _three_blobs_csv(path: Path) -> None:
    centres = np.repeat(np.eye(3) * 6.0, [70, 70, 60], axis=0)
    points = centres + np.random.default_rng(0).normal(size=centres.shape)
    np.savetxt(path, points, delimiter=",", fmt="%.5f")


#: The reader's own files that commands in the documents name, written into the
#: temporary directory before a document's script runs.
STAND_INS = {"my.csv": _three_blobs_csv}


def graphclust_pieces(command: str) -> list[str]:
    """The pieces of a console command that run here (see the module notes)."""
    pieces = [p.strip() for p in command.split("&&")]
    return [p for p in pieces if re.match(r"^(\w+=\S*\s+)*graphclust(\s|$)", p)]


def script_of(blocks: list[Block]) -> str:
    """One script running ``blocks`` in order (the module notes say how)."""
    out = ["import subprocess as _subprocess",
           "def _sh(command):",
           "    print('$', command, flush=True)",
           "    _subprocess.run(command, shell=True, check=True)", ""]
    for b in blocks:
        out.append(f"# --- {b.label} ({b.kind})")
        if b.kind == "python":
            out.append(b.code)
        elif b.kind == "file":
            name = FILE_NAME.match(b.code.splitlines()[0].strip()).group(1)
            out.append(f"open({name!r}, 'w').write({b.code!r})")
        else:
            for command in b.commands():
                for piece in graphclust_pieces(command):
                    out.append(f"if __name__ == '__main__':\n    _sh({piece!r})")
    return "\n".join(out) + "\n"


def _runs_something(b: Block) -> bool:
    return b.kind != "console" or any(graphclust_pieces(c) for c in b.commands())


def _cases():
    quick, slow, skipped = [], [], []
    for path in documents():
        blocks = blocks_of(path)
        name = str(path.relative_to(ROOT))
        run = [b for b in blocks if b.marker is None and _runs_something(b)]
        if any(b.kind != "file" for b in run):
            quick.append(pytest.param(run, id=name))
        later = [b for b in blocks if b.marker == "slow-run" or b.kind == "file"]
        if any(b.marker == "slow-run" for b in later):
            slow.append(pytest.param(later, id=name, marks=pytest.mark.slow))
        for b in blocks:
            if b.marker == "not-run":
                skipped.append(pytest.param(b, f"not-run: {b.reason}", id=b.label))
            elif b.marker is None and not _runs_something(b):
                skipped.append(pytest.param(
                    b, "no graphclust command (pip install needs the network; other tools "
                    f"are not graphclust's): {'; '.join(b.commands())}", id=b.label))
    return quick, slow, skipped


QUICK, SLOW, SKIPPED = _cases()


def _needs_data_folder(blocks: list[Block]) -> list[str]:
    """The data-folder sets (``usps``, ``mnist``) the blocks' commands name: without the
    folder the test is skipped with that reason, like the other tests that read it."""
    from graphclust.data import BUNDLED

    names = {m.group(1) for b in blocks if b.kind == "console"
             for m in re.finditer(r"--dataset\s+(\S+)", b.code)}
    return sorted(n for n in names if n not in BUNDLED and not Path(n).suffix)


def _run_script(blocks: list[Block], tmp_path: Path) -> None:
    from graphclust.data import find_data_dir

    missing = _needs_data_folder(blocks)
    if missing and find_data_dir() is None:
        pytest.skip(f"benchmark data folder not found (the commands read {', '.join(missing)})"
                    ": set GRAPHCLUST_DATA or place ../shared/data")
    for name, write in STAND_INS.items():
        write(tmp_path / name)
    script = tmp_path / "blocks.py"
    script.write_text(script_of(blocks), encoding="utf-8")
    env = dict(os.environ, MPLBACKEND="Agg")
    # the console commands find the graphclust of this Python
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    proc = subprocess.run([sys.executable, script.name], check=False, cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=1200)
    if proc.returncode != 0:
        pytest.fail(f"the blocks of {blocks[0].path.name} failed (script {script}):\n"
                    f"{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")


@pytest.mark.slow  # a minute in all: the quick tier keeps the parsing and the listing
@pytest.mark.parametrize("blocks", QUICK)
def test_document_blocks_run(blocks, tmp_path):
    _run_script(blocks, tmp_path)


@pytest.mark.parametrize("blocks", SLOW)
def test_document_slow_blocks_run(blocks, tmp_path):
    _run_script(blocks, tmp_path)


@pytest.mark.parametrize("block, reason", SKIPPED)
def test_blocks_not_run_are_listed(block, reason):
    pytest.skip(f"{block.label}: {reason}")


def test_every_document_has_its_blocks_found():
    """The extraction sees the blocks a reader sees (a changed fence or directive style
    would otherwise drop them from the test unnoticed)."""
    found = {str(p.relative_to(ROOT)): len(blocks_of(p)) for p in documents()}
    assert found["README.md"] >= 6 and found["docs/dask.rst"] >= 2
    assert sum(found.values()) >= 25
    kinds = {b.kind for p in documents() for b in blocks_of(p)}
    assert kinds == {"python", "console", "file"}


def test_markers_and_commands_are_parsed(tmp_path):
    rst = tmp_path / "x.rst"
    rst.write_text("Text::\n\n   import os\n   x = 1\n\n.. not-run: a fragment\n\n"
                   ".. code-block:: python\n\n   undefined()\n\n"
                   ".. code-block:: console\n\n   $ pip install x && graphclust plugins \\\n"
                   "         --json\n   $ python -m build\n")
    lit, frag, console = rst_blocks(rst)
    assert lit.kind == "python" and lit.marker is None and lit.code == "import os\nx = 1\n"
    assert frag.marker == "not-run" and frag.reason == "a fragment"
    assert console.commands() == ["pip install x && graphclust plugins --json",
                                  "python -m build"]
    assert [graphclust_pieces(c) for c in console.commands()] == [
        ["graphclust plugins --json"], []]
