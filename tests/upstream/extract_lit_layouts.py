"""Extract every layout-carrying type from Triton's lit tests (``test/**/*.mlir``) into
``tests/upstream/lit_layouts.json``: the type text with its aliases written out, and the file and
line it came from. The lit files themselves are not stored.

Usage (from the repository root)::

    python tests/upstream/extract_lit_layouts.py GIT_DIR [--rev REV] [--repo OWNER/NAME] [--out PATH] [--exclude RE]

The stored file was made from facebookexperimental/triton (Meta's fork, which merges
triton-lang/triton's main; the upstream snapshot was too large to fetch here), leaving out the
fork's own tests (``test/TLX/`` and the ``test/Hopper/`` files triton-lang/triton does not have)::

    python tests/upstream/extract_lit_layouts.py <mirror>/facebookexperimental+triton/repo \\
        --repo facebookexperimental/triton --exclude '^test/TLX/' \\
        --exclude '^test/Hopper/(?!WarpSpecialization/ws_(code_partition|data_partition|task_id_propagation|task_partition)\\.mlir$)'

``GIT_DIR`` is a bare clone (no work tree needed: files are read with ``git cat-file``). This
script is independent of verilayout (it must not share the reader it feeds): it splits each file
at ``// -----``, collects the ``#name = ...`` and ``!name = ...`` alias lines of each split,
finds every ``tensor<``, ``!ttg.memdesc<`` and ``!tt.tensordesc<`` by bracket matching, writes
the aliases out, and keeps the types whose encoding is a Triton layout attribute (``#ttg.``,
``#ttng.``, ``#ttig.``, ``#triton_*``). Each distinct type is stored once, with its first
location and its number of uses; alias definitions of layout attributes that no type uses are
listed apart (``unused_attributes``), as are types whose alias is not defined in their split.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

LAYOUT_PREFIXES = ("#ttg.", "#ttng.", "#ttig.", "#triton_")
TYPE_START = re.compile(r"tensor<|!ttg\.memdesc<|!triton_gpu\.memdesc<|!tt\.tensordesc<")
ALIAS_DEF = re.compile(r"^\s*([#!][\w$.\-]+)\s*=\s*(.*)$")
ALIAS_REF = re.compile(r"([#!][A-Za-z_$][\w$.\-]*)")
SPLIT = re.compile(r"^\s*//\s*-----")


def git_files(git_dir: str, rev: str) -> list[str]:
    out = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", rev, "--", "test"],
                         check=True, capture_output=True, text=True).stdout
    return sorted(p for p in out.splitlines() if p.endswith(".mlir"))


def git_texts(git_dir: str, rev: str, paths: list[str]) -> dict[str, str]:
    """The files' texts, read with one ``git cat-file --batch``."""
    req = "".join(f"{rev}:{p}\n" for p in paths).encode()
    raw = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "--batch"], input=req,
                         check=True, capture_output=True).stdout
    texts, pos = {}, 0
    for p in paths:
        nl = raw.index(b"\n", pos)
        header = raw[pos:nl].split()
        size = int(header[2])
        texts[p] = raw[nl + 1: nl + 1 + size].decode("utf-8", "replace")
        pos = nl + 1 + size + 1
    return texts


def balanced_end(text: str, start: int) -> int:
    """Index just past the ``>`` closing the ``<`` at ``start`` (-1 when unbalanced on the line run)."""
    depth = 0
    i = start
    while i < len(text):
        c = text[i]
        if c == "<":
            depth += 1
        elif c == ">" and text[i - 1] != "-":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == "\n" and depth and text[i + 1: i + 3] == "//":
            return -1
        i += 1
    return -1


def top_level_split(body: str) -> list[str]:
    """Split at the commas not nested in any bracket."""
    parts, depth, cur = [], 0, []
    for c in body:
        if c in "<{[(":
            depth += 1
        elif c in ">}])":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur).strip())
    return parts


def _uncommented(line: str) -> str:
    """A line without its trailing ``// comment`` (layout text holds no strings with ``//``)."""
    return line.split("//", 1)[0].strip()


def alias_table(lines: list[str]) -> dict[str, tuple[str, int]]:
    """``{#name or !name: (value text, line index)}`` of the alias lines (values may span lines)."""
    table = {}
    i = 0
    while i < len(lines):
        m = ALIAS_DEF.match(lines[i])
        if m and not re.fullmatch(r"#loc\d*", m.group(1)):
            value, j = _uncommented(m.group(2)), i
            while value.count("<") - value.count("->") > value.count(">") - value.count("->") and j + 1 < len(lines):
                j += 1
                value += " " + _uncommented(lines[j])
            table[m.group(1)] = (value, i)
            i = j
        i += 1
    return table


def resolve(text: str, table: dict, depth: int = 0) -> str | None:
    """``text`` with every alias written out (None when an alias is not defined)."""
    if depth > 20:
        return None
    missing = []

    def sub(m: re.Match) -> str:
        name = m.group(1)
        if name in table:
            r = resolve(table[name][0], table, depth + 1)
            if r is None:
                missing.append(name)
                return name
            return r
        if "." not in name and name not in ("#smem", "!smem"):
            missing.append(name)
        return name

    out = ALIAS_REF.sub(sub, text)
    return None if missing else out


def encoding_of(type_text: str) -> str | None:
    body = type_text[type_text.index("<") + 1: -1]
    parts = top_level_split(body)
    if type_text.startswith("!tt.tensordesc"):
        return None
    return parts[1] if len(parts) > 1 and parts[1].startswith("#") else None


def types_in_split(lines: list[str], first_line: int, table: dict):
    """Yield ``(line number, raw text, resolved text or None, context)`` of each type in a split."""
    text = "\n".join(lines)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln) + 1)
    for m in TYPE_START.finditer(text):
        line_idx = next(k for k in range(len(starts) - 1) if starts[k] <= m.start() < starts[k + 1])
        if lines[line_idx].lstrip().startswith("//"):
            continue
        end = balanced_end(text, m.end() - 1)
        if end < 0:
            continue
        raw = text[m.start():end]
        context = "tensordesc" if text[max(0, m.start() - 15): m.start()].endswith("!tt.tensordesc<") else ""
        yield first_line + line_idx + 1, raw, resolve(raw, table), context


def extract_file(path: str, text: str, found: dict, unresolved: list, unused: dict) -> None:
    lines = text.split("\n")
    split_at = [0] + [i + 1 for i, ln in enumerate(lines) if SPLIT.match(ln)] + [len(lines) + 1]
    for a, b in zip(split_at, split_at[1:]):
        chunk = lines[a: b - 1] if b - 1 > a else []
        table = alias_table(chunk)
        used: set[str] = set()
        for line, raw, resolved, context in types_in_split(chunk, a, table):
            if resolved is None:
                if any(p in raw for p in LAYOUT_PREFIXES) or "#" in raw:
                    unresolved.append({"file": path, "line": line, "type": raw})
                continue
            if resolved.startswith("!tt.tensordesc"):
                continue
            enc = encoding_of(resolved)
            if enc is None or not enc.startswith(LAYOUT_PREFIXES):
                continue
            used.update(n for n in ALIAS_REF.findall(raw) if n in table)
            entry = found.setdefault(resolved, {"type": resolved, "attribute": enc, "file": path, "line": line,
                                                "context": context, "uses": 0})
            entry["uses"] += 1
        todo = list(used)
        while todo:
            for n in ALIAS_REF.findall(table[todo.pop()][0]):
                if n in table and n not in used:
                    used.add(n)
                    todo.append(n)
        for name, (value, idx) in table.items():
            full = resolve(value, table)
            if name.startswith("#") and full and full.startswith(LAYOUT_PREFIXES) and name not in used:
                unused.setdefault(full, {"attribute": full, "file": path, "line": a + idx + 1})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("git_dir")
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--repo", default="triton-lang/triton")
    ap.add_argument("--out", default=str(Path(__file__).with_name("lit_layouts.json")))
    ap.add_argument("--exclude", action="append", default=[],
                    help="regex of paths to leave out (a fork's own tests); repeatable")
    args = ap.parse_args(argv)
    commit = subprocess.run(["git", f"--git-dir={args.git_dir}", "rev-parse", args.rev], check=True,
                            capture_output=True, text=True).stdout.strip()
    paths = [p for p in git_files(args.git_dir, commit) if not any(re.search(x, p) for x in args.exclude)]
    texts = git_texts(args.git_dir, commit, paths)
    found: dict = {}
    unresolved: list = []
    unused: dict = {}
    for p in paths:
        extract_file(p, texts[p], found, unresolved, unused)
    doc = {"source": {"repo": args.repo, "commit": commit, "files": len(paths),
                      "excluded": args.exclude, "how": "tests/upstream/extract_lit_layouts.py"},
           "types": sorted(found.values(), key=lambda e: (e["file"], e["line"])),
           "unused_attributes": sorted(unused.values(), key=lambda e: (e["file"], e["line"])),
           "unresolved": unresolved}
    Path(args.out).write_text(json.dumps(doc, indent=0) + "\n")
    print(f"{len(paths)} files, {len(found)} distinct types, {len(unused)} unused attributes, "
          f"{len(unresolved)} unresolved", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
