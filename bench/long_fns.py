#!/usr/bin/env python3
"""The Rust functions longer than a bound, longest first: `file:line name lines`.

Usage: bench/long_fns.py [--over N] [--tests] [DIR ...]   (default: N = 100, DIR = the workspace)

A function runs from its `fn` line to the line where its braces close (counted outside strings,
chars and comments, a raw string's body included). Functions in `#[cfg(test)]` modules and in
`tests/` folders are left out unless `--tests` is given; nested functions are counted inside the
function that holds them, and again on their own.
"""

import os
import re
import sys

CHAR = re.compile(r"'(?:[^\\'\n]|\\[^'\n]{1,9})'")
FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+\"[^\"]*\"\s+)?fn\s+(\w+)")


def code_chars(text):
    """`text` with strings, chars and comments blanked (newlines kept), so braces count true."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = '"' + hashes
            j = text.find(end, i + 2 + len(hashes))
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'" and CHAR.match(text, i):
            j = CHAR.match(text, i).end()
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path, tests):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    code = code_chars(text)
    lines = code.split("\n")
    test_from = None
    if not tests:
        for k, line in enumerate(text.split("\n")):
            if line.strip().startswith("#[cfg(test)]"):
                test_from = k
                break
    for k, line in enumerate(lines):
        if test_from is not None and k >= test_from:
            break
        m = FN.match(line)
        if not m:
            continue
        depth, opened = 0, False
        for j in range(k, len(lines)):
            for ch in lines[j]:
                if ch == "{":
                    depth, opened = depth + 1, True
                elif ch == "}":
                    depth -= 1
                elif ch == ";" and not opened and depth == 0:
                    break  # a declaration without a body
            else:
                if opened and depth == 0:
                    yield k + 1, m.group(1), j - k + 1
                    break
                continue
            break


def main(argv):
    over, tests, dirs = 100, False, []
    it = iter(argv)
    for a in it:
        if a == "--over":
            over = int(next(it))
        elif a == "--tests":
            tests = True
        else:
            dirs.append(a)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dirs = dirs or [root]
    found = []
    for d in dirs:
        for base, subdirs, files in os.walk(d):
            subdirs[:] = sorted(
                s for s in subdirs
                if s not in ("target", ".git") and not s.startswith(".") and (tests or s != "tests")
            )
            for name in sorted(files):
                if name.endswith(".rs"):
                    path = os.path.join(base, name)
                    for line, fn, length in functions(path, tests):
                        if length > over:
                            found.append((length, os.path.relpath(path), line, fn))
    for length, path, line, fn in sorted(found, key=lambda f: (-f[0], f[1], f[2])):
        print(f"{path}:{line} {fn} {length}")
    print(f"{len(found)} functions over {over} lines", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
