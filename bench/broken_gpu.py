#!/usr/bin/env python3
"""The broken-kernel corpus (kernels/tests/fixtures/broken) on three judges: the simulator, the GPU
backend, and compute-sanitizer around the GPU backend. Run on the device machine from the repo root
with the release runner carried; prints one row per kernel (issue 4's comparison)."""
import glob, json, os, re, subprocess, sys

RUNNER = os.environ.get("RUNNER", "target/release/runner")
TOOL = {"clean": "racecheck", "race": "racecheck", "uninitialized_read": "initcheck", "barrier_divergence": "synccheck"}


def check(puzzle, path, backend, case=None):
    cmd = [RUNNER, "check", puzzle, "--kernel", path, "--backend", backend, "--json", "--timeout", "3"]
    if case:
        cmd += ["--case", case]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300).stdout
    try:
        o = json.loads(out)
    except json.JSONDecodeError:
        return "no json"
    kinds = sorted({d["kind"] for d in o["diagnostics"]})
    lines = sorted({d.get("line") for d in o["diagnostics"] if d.get("line")})
    return ",".join(kinds) + (f" @{lines}" if lines else "") if kinds else ("pass" if o["passed"] else "fail")


def sanitize(puzzle, path, tool, case):
    cmd = ["compute-sanitizer", "--tool", tool, "--target-processes", "all", "--print-limit", "2",
           RUNNER, "check", puzzle, "--kernel", path, "--backend", "gpu", "--case", case, "--timeout", "60"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return f"{tool}: timed out"
    text = r.stdout + r.stderr
    counts = [int(n) for n in re.findall(r"ERROR SUMMARY: (\d+) error", text)]
    first = next((l.strip() for l in text.splitlines() if l.startswith("========= ") and ("Invalid" in l or "hazard" in l or "Uninitialized" in l or "Barrier" in l or "error" in l.lower() and "SUMMARY" not in l)), "")
    where = re.search(r"at (\S+):(\d+)", text)
    return f"{tool}: {sum(counts)} errors" + (f" ({first[10:80]}{' ' + where.group(2) if where else ''})" if sum(counts) else "")


# Fixtures whose names contain the first argument, if one is given. A fixture without a mark is a
# correct kernel ("clean"): every judge should pass it, racecheck included.
only = sys.argv[1] if len(sys.argv) > 1 else ""
rows = []
for path in sorted(glob.glob("kernels/tests/fixtures/broken/*.cu")):
    name = os.path.basename(path)[:-3]
    if only not in name:
        continue
    puzzle = "puzzle-" + name[1:3]
    src = open(path).read()
    mark = re.search(r"expect: (\w+)", src)
    expect = mark.group(1) if mark else "clean"
    line = next((i + 1 for i, l in enumerate(src.splitlines()) if "expect:" in l), 0)
    sim = check(puzzle, path, "sim")
    gpu = check(puzzle, path, "gpu", "random-1")
    san = "skipped (endless loop)" if expect == "timeout" else sanitize(puzzle, path, TOOL.get(expect, "memcheck"), "random-1")
    row = f"{name:<26} expect {expect}@{line:<3} | sim {sim} | gpu {gpu} | {san}"
    print(row, flush=True)
