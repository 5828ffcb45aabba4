"""The README stays true: its console transcripts and its Python snippet are run here."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()


def transcripts():
    for block in re.findall(r"```console\n(.*?)```", README, re.S):
        cmd, out = None, []
        for line in block.splitlines():
            if line.startswith("$ "):
                if cmd:
                    yield cmd, "\n".join(out)
                cmd, out = line[2:], []
            else:
                out.append(line)
        if cmd:
            yield cmd, "\n".join(out)


def normalize(text: str) -> str:
    # timings differ run to run
    text = re.sub(r"\d+\.\d+ ?(ms|s)\b", "T", text)
    return text.strip()


@pytest.mark.parametrize("cmd, expected", list(transcripts()))
def test_console_transcript(cmd, expected):
    argv = shlex.split(cmd)
    assert argv[0] == "verilayout"
    p = subprocess.run([sys.executable, "-m", "verilayout.cli", *argv[1:]], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    got = (p.stdout + p.stderr)
    assert normalize(got) == normalize(expected), got


def test_python_snippet_runs_and_its_comments_hold():
    code = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    ns: dict = {}
    lines = code.splitlines()
    src = []
    for line in lines:
        m = re.match(r"^(?P<expr>[^#=]+?)\s+# (?P<val>[\[{('].*)$", line)
        if m and not line.startswith(" "):
            src.append(f"__check(({m.group('expr').strip()}), {m.group('val')!r})")
        else:
            src.append(line)

    def check(value, expected):
        assert repr(value) == expected, (value, expected)

    ns["__check"] = check
    exec("\n".join(src), ns)
