"""The shell commands of README.md's "Set up" section, as written.

``python .ci/readme_commands.py`` prints them, one per line. ``--check FILE`` exits 1
unless each is a line of ``FILE``: ``.ci/run`` writes them out verbatim and checks itself
this way first, so CI runs what a newcomer runs — the README's set-up and test commands in
a fresh virtual environment, with only the extras they name.
``tests/core/test_core_test_tiers.py`` checks that the section holds both.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path


def setup_commands(readme: str) -> list[str]:
    """The ``bash`` blocks of the ``## Set up`` section of ``readme``, one command each
    (a block's lines joined, comments and blank lines left out)."""
    section = re.search(r"^## Set up\n(.*?)(?=^## )", readme, re.S | re.M)
    if section is None:
        raise SystemExit("README.md has no '## Set up' section")
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", section.group(1), re.S):
        lines = [line for line in block.splitlines()
                 if line.strip() and not line.lstrip().startswith("#")]
        commands.append(" ".join(lines).replace("\\ ", " "))
    return commands


def missing_from(script: str, commands: list[str]) -> list[str]:
    """The ``commands`` that are not a line of ``script`` (as written, whitespace at the
    ends aside)."""
    lines = {line.strip() for line in script.splitlines()}
    return [c for c in commands if c not in lines]


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    commands = setup_commands((root / "README.md").read_text())
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        missing = missing_from(Path(sys.argv[2]).read_text(), commands)
        if missing or len(commands) < 2:
            sys.exit(f"{sys.argv[2]} does not run README.md's Set up commands as written: "
                     f"{missing or 'the section lost its commands'}")
    else:
        for command in commands:
            sys.stdout.write(command + "\n")
