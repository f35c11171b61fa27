#!/usr/bin/env python3
"""The workbook's broken-kernel corpora on three judges (issue 18): the simulator, the GPU alone,
and compute-sanitizer around the GPU.

Corpora: kernels/conformance/tests/fixtures/broken (puzzles 01 to 03) and runner/tests/fixtures/broken2d
(puzzles 09 and 10). Each broken kernel marks its faulty line with `// expect: KIND`; a fixture
without a mark is a correct kernel, which every judge should pass. Fixtures that order shared
memory with `__syncwarp()` are left out: they are right or wrong for the one-warp block of the
simulator's own tests (their `// defines:` line), and the puzzle's cases launch larger blocks.

- simulator: `runner check PUZZLE --kernel F --backend sim --json`, every small case;
- GPU alone: `runner check PUZZLE --kernel F --backend gpu --json --timeout 5`, every case the GPU
  runs (small and full scale): does it pass, and what does it report;
- compute-sanitizer: the tool that fits the fault (racecheck for races and correct kernels,
  initcheck for reads of unwritten memory, synccheck for barriers, memcheck otherwise) around
  `runner check --backend gpu --case random-1`.

The simulator needs no GPU, so its side can run apart and be carried:

    RUNNER=target/release/runner python3 bench/broken_gpu.py --sim-only sim.json
    RUNNER=... python3 bench/broken_gpu.py --sim sim.json OUT_DIR     # on the GPU machine

Without `--sim` the GPU machine runs all three. OUT_DIR/broken.json holds every verdict;
bench/broken.json is the committed copy, from which runner/tests/it/broken_table.rs draws the
introduction's table.
"""
import concurrent.futures, glob, json, os, re, subprocess, sys, time

RUNNER = os.environ.get("RUNNER", "target/release/runner")
CORPORA = [("1D", "kernels/conformance/tests/fixtures/broken"), ("2D", "runner/tests/fixtures/broken2d")]
TOOL = {"clean": "racecheck", "race": "racecheck", "uninitialized_read": "initcheck",
        "barrier_divergence": "synccheck"}


def fixtures():
    for corpus, folder in CORPORA:
        for path in sorted(glob.glob(f"{folder}/*.cu")):
            name = os.path.basename(path)[:-3]
            src = open(path).read().splitlines()
            if any("__syncwarp" in l for l in src):
                continue
            marks = [(i + 1, m.group(1)) for i, l in enumerate(src) if (m := re.search(r"// expect: (\w+)", l))]
            line, expect = marks[0] if marks else (0, "clean")
            yield {"name": name, "corpus": corpus, "path": path, "puzzle": "puzzle-" + name[1:3],
                   "expect": expect, "line": line}


def check(f, backend, *extra, timeout=300):
    cmd = [RUNNER, "check", f["puzzle"], "--kernel", f["path"], "--backend", backend, "--json", *extra]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout).stdout
        o = json.loads(out)
    except (subprocess.TimeoutExpired, json.JSONDecodeError) as e:
        return {"passed": False, "kinds": [], "lines": [], "error": str(e)[:200]}
    ds = o["diagnostics"]
    return {"passed": o["passed"], "kinds": sorted({d["kind"] for d in ds}),
            "lines": sorted({d["line"] for d in ds if d.get("line")})}


def sim_verdict(f):
    v = check(f, "sim")
    # Diagnosed: the expected kind, at the marked line where the diagnostic has one.
    v["diagnosed"] = f["expect"] in v["kinds"] and (not v["lines"] or f["line"] in v["lines"])
    return v


def sanitize(f):
    tool = TOOL.get(f["expect"], "memcheck")
    if f["expect"] == "timeout":
        return {"tool": tool, "errors": None, "skipped": "endless loop"}
    cmd = ["compute-sanitizer", "--tool", tool, "--target-processes", "all", "--print-limit", "2",
           RUNNER, "check", f["puzzle"], "--kernel", f["path"], "--backend", "gpu", "--case", "random-1",
           "--timeout", "60"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired:
        return {"tool": tool, "errors": None, "skipped": "timed out"}
    text = r.stdout + r.stderr
    counts = [int(n) for n in re.findall(r"ERROR SUMMARY: (\d+) error", text)]
    first = next((l[10:].strip() for l in text.splitlines() if l.startswith("========= ")
                  and re.search(r"Invalid|hazard|Uninitialized|Barrier|Race", l)), "")
    return {"tool": tool, "errors": sum(counts), "first": first[:120]}


def gpu_side(f):
    f, start = dict(f), time.time()
    f["gpu"] = check(f, "gpu", "--timeout", "5")
    f["sanitizer"] = sanitize(f)
    print(f"{f['name']:<30} expect {f['expect']:<20} sim {f['sim']['kinds']} | gpu "
          f"{'pass' if f['gpu']['passed'] else f['gpu']['kinds']} | {f['sanitizer']} "
          f"({time.time() - start:.0f} s)", flush=True)
    # One JSON line per kernel as it ends, so that a run cut short keeps what it measured.
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "broken.jsonl"), "a") as out:
            out.write(json.dumps(f) + "\n")
    return f


def main():
    args = sys.argv[1:]
    if args[:1] == ["--sim-only"]:
        rows = [dict(f, sim=sim_verdict(f)) for f in fixtures()]
        json.dump(rows, open(args[1], "w"), indent=1)
        return
    if args[:1] == ["--sim"]:
        rows, args = json.load(open(args[1])), args[2:]
    else:
        rows = [dict(f, sim=sim_verdict(f)) for f in fixtures()]
    # ONLY=name,name: those kernels alone (to complete a run cut short).
    only = [n for n in os.environ.get("ONLY", "").split(",") if n]
    rows = [r for r in rows if not only or r["name"] in only]
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    start = time.time()
    with concurrent.futures.ThreadPoolExecutor(int(os.environ.get("JOBS", "8"))) as pool:
        rows = list(pool.map(gpu_side, rows))
    print(f"{len(rows)} kernels in {time.time() - start:.0f} s on {gpu}")
    report = {"gpu": gpu, "date": time.strftime("%Y-%m-%d"),
              "command": "python3 bench/broken_gpu.py (RUNNER=target/release/runner)", "kernels": rows}
    if args:
        os.makedirs(args[0], exist_ok=True)
        json.dump(report, open(os.path.join(args[0], "broken.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
