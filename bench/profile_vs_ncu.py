#!/usr/bin/env python3
"""`runner profile` against the device (issue 18).

For the solutions of puzzles 01 and 04 to 10 and a naive kernel (bench/naive_p04.cu, puzzle 04's
contract):
- counts: the global requests, sectors and L1 wavefronts and the shared requests and wavefronts
  that `runner profile --case CASE` counts in the simulator for a small case run whole (its
  `exact:` line), beside what `ncu` measures for the same case run by
  `runner check --backend gpu --case CASE`;
- times: what `runner profile --case FULL` predicts for each full-scale case (a sample of its
  blocks) beside the median `runner bench` measures (puzzle 01, which `runner bench` does not
  time, by `ncu`'s gpu__time_duration with the clocks left alone).

The simulator's side needs no GPU, so it can be run apart and carried:

    RUNNER=target/release/runner python3 bench/profile_vs_ncu.py --sim-only sim.json
    RUNNER=... python3 bench/profile_vs_ncu.py --sim sim.json OUT_DIR     # on the GPU machine

Without `--sim` the GPU machine runs both. OUT_DIR receives profile_vs_ncu.md (the table) and
profile_vs_ncu.json (every number).

After a change to the model, the simulator's side can be redone against the stored device numbers
(no GPU):

    RUNNER=... python3 bench/profile_vs_ncu.py --stored bench/profile_vs_ncu.json OUT_DIR

The kernels are then taken as they were when the device measured them (the stored `kernels_at`
commit, read with `git show`; solutions changed since would be compared with another kernel's times).

With `--corpus` first, the same three steps run on every correct kernel of the project's corpora
instead (issue 36; `bench/profile_corpus.py` says what it measures; its numbers are in
`bench/profile_corpus.json`).
"""
import csv, io, json, os, re, subprocess, sys, tempfile

R = os.environ.get("RUNNER", "target/release/runner")
ROOT = os.environ.get("ROOT")
NCU = os.environ.get("NCU", "ncu")
FULL_1D = ["full"]
FULL_2D = ["full-4096x4096-3x3", "full-4096x4096-15x15", "full-8192x8192-5x5"]
# (puzzle, kernel file, small case for the counts, full cases for the times)
KERNELS = [
    ("puzzle-01", "solutions/puzzle-01.cu", "large", FULL_1D),
    ("puzzle-04", "solutions/puzzle-04.cu", "random-halo", FULL_1D),
    ("puzzle-05", "solutions/puzzle-05.cu", "random-halo", FULL_1D),
    ("puzzle-06", "solutions/puzzle-06.cu", "random-halo", FULL_1D),
    ("puzzle-07", "solutions/puzzle-07.cu", "random-halo", FULL_1D),
    ("puzzle-08", "solutions/puzzle-08.cu", "random-halo", FULL_1D),
    ("puzzle-04", "bench/naive_p04.cu", "random-halo", FULL_1D),
    ("puzzle-09", "solutions/puzzle-09.cu", "random-1", FULL_2D),
    ("puzzle-10", "solutions/puzzle-10.cu", "random-1", FULL_2D),
]
OPS = ("ld", "st", "ldgsts")
METRICS = [f"l1tex__t_{k}_pipe_lsu_mem_global_op_{o}.sum" for k in ("requests", "sectors") for o in OPS] + [
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_shared_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
]
# Global L1 wavefronts, where this ncu knows the metric (asked with --query-metrics first).
WAVEFRONTS = [f"l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_{o}" for o in ("ld", "st")]


def runner(*args, timeout=600):
    cmd = [R] + (["--root", ROOT] if ROOT else []) + ["--color", "never"] + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p.stdout + p.stderr


def sim_counts(puzzle, kernel, case):
    out = runner("profile", puzzle, "--kernel", kernel, "--case", case)
    m = re.search(r"exact: (\d+) global requests, (\d+) sectors, (\d+) global wavefronts, (\d+) shared requests, "
                  r"(\d+) shared wavefronts", out)
    if not m:
        print(f"{kernel} {case}: no exact line:\n{out[-1500:]}", file=sys.stderr)
        return None
    keys = ("global_req", "sectors", "global_wavefronts", "shared_req", "wavefronts")
    return dict(zip(keys, map(int, m.groups())))


def predicted(puzzle, kernel, case):
    out = runner("profile", puzzle, "--kernel", kernel, "--case", case)
    m = re.search(r"predicted on an .*?: ([0-9.]+) us, ([a-z-]+)", out)
    if not m:
        print(f"{kernel} {case}: no prediction:\n{out[-1500:]}", file=sys.stderr)
        return None
    return {"us": float(m.group(1)), "bound": m.group(2)}


def sim_side(at=None):
    """The simulator's counts and predictions; with `at`, of the kernel files as of that commit."""
    rows, tmp = [], tempfile.mkdtemp()
    for puzzle, kernel, small, full in KERNELS:
        path = kernel
        if at:
            path = os.path.join(tmp, kernel.replace("/", "_"))
            with open(path, "w") as f:
                f.write(subprocess.run(["git", "show", f"{at}:{kernel}"], capture_output=True, text=True,
                                       check=True).stdout)
        rows.append({"puzzle": puzzle, "kernel": kernel, "case": small,
                     "sim": sim_counts(puzzle, path, small),
                     "predicted": {c: predicted(puzzle, path, c) for c in full}})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def ncu(args, metrics):
    cmd = [NCU, "--target-processes", "all", "--clock-control", "none", "--csv", "--metrics",
           ",".join(metrics), R] + (["--root", ROOT] if ROOT else []) + args
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    text = p.stdout[p.stdout.find('"ID"'):] if '"ID"' in p.stdout else ""
    m = {}
    for r in csv.DictReader(io.StringIO(text)):
        if r.get("Kernel Name", "").startswith("conv"):
            v = r["Metric Value"].replace(",", "")
            try:
                m[r["Metric Name"]] = m.get(r["Metric Name"], 0.0) + float(v)
            except ValueError:
                pass
    if not m:
        print(f"ncu {' '.join(args)} failed:\n{p.stdout[-1500:]}{p.stderr[-1500:]}", file=sys.stderr)
    return m


def ncu_counts(puzzle, kernel, case, known):
    metrics = METRICS + [w + ".sum" for w in WAVEFRONTS if w in known]
    m = ncu(["check", puzzle, "--kernel", kernel, "--backend", "gpu", "--case", case], metrics)
    if not m:
        return None
    g = lambda k: m.get(k, 0.0)
    sum_of = lambda what: sum(g(f"l1tex__t_{what}_pipe_lsu_mem_global_op_{o}.sum") for o in OPS)
    wf = [g(w + ".sum") for w in WAVEFRONTS if w in known]
    return {"global_req": sum_of("requests"), "sectors": sum_of("sectors"),
            "global_wavefronts": sum(wf) if wf else None,
            "shared_req": g("smsp__inst_executed_op_shared_ld.sum") + g("smsp__inst_executed_op_shared_st.sum"),
            "wavefronts": g("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
            + g("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")}


def measured(puzzle, kernel, full):
    """Median microseconds per full case."""
    if puzzle == "puzzle-01":
        m = ncu(["check", puzzle, "--kernel", kernel, "--backend", "gpu", "--case", "full"],
                ["gpu__time_duration.sum"])
        return {"full": m["gpu__time_duration.sum"] / 1e3} if m else {}
    out = runner("bench", puzzle, "--kernel", kernel, "--runs", "20", "--json")
    try:
        o = json.loads(out[out.find("{"):])
    except ValueError:
        print(f"bench {kernel}: {out[-1500:]}", file=sys.stderr)
        return {}
    mine = lambda entries: next(e["median_us"] for e in entries if e["file"].endswith(kernel))
    if "shapes" in o:
        return {s["case"]: mine(s["entries"]) for s in o["shapes"]}
    return {full[0]: mine(o["entries"])}


def fmt(x, d=0):
    return "-" if x is None else f"{x:,.{d}f}"


def table(rows, gpu):
    out = [f"Counts on the small case run whole: simulator / ncu ({gpu}).", "",
           "| kernel | case | global requests | sectors | global wavefronts | shared requests | shared wavefronts |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        s, n = r["sim"] or {}, r.get("ncu") or {}
        pair = lambda k: f"{fmt(s.get(k))} / {fmt(n.get(k))}" + (" ✓" if s.get(k) is not None and s.get(k) == n.get(k) else "")
        out.append(f"| {r['kernel']} | {r['case']} | {pair('global_req')} | {pair('sectors')} | "
                   f"{pair('global_wavefronts')} | {pair('shared_req')} | {pair('wavefronts')} |")
    out += [""] + times_table(rows, f"against measured ({gpu})")
    return "\n".join(out) + "\n"


def times_table(rows, against):
    """The full-scale times' table, predicted against measured, as lines (`profile_corpus` too)."""
    out = [f"Full-scale times: predicted by `runner profile` (an H100 SXM5 model) {against}.", "",
           "| kernel | case | predicted us (bound) | measured us | predicted / measured |", "|---|---|---|---|---|"]
    for r in rows:
        for case, p in r["predicted"].items():
            b = (r.get("measured") or {}).get(case)
            ratio = f"{p['us'] / b:.2f}" if p and b else "-"
            pred = f"{fmt(p['us'], 1)} ({p['bound']})" if p else "-"
            out.append(f"| {r['kernel']} | {case} | {pred} | {fmt(b, 1)} | {ratio} |")
    return out


def main():
    args = sys.argv[1:]
    if args[:1] == ["--corpus"]:
        import profile_corpus  # beside this file: the corpora's correct kernels (issue 36)
        return profile_corpus.main(args[1:])
    if args[:1] == ["--stored"]:
        stored = json.load(open(args[1]))
        rows = sim_side(stored.get("kernels_at"))
        for r, old in zip(rows, stored["rows"]):
            r["measured"], r["ncu"] = old.get("measured"), old.get("ncu")
        text = table(rows, stored["gpu"])
        print(text)
        os.makedirs(args[2], exist_ok=True)
        open(os.path.join(args[2], "profile_vs_ncu.md"), "w").write(text)
        stored["rows"] = rows
        json.dump(stored, open(os.path.join(args[2], "profile_vs_ncu.json"), "w"), indent=1)
        return
    if args[:1] == ["--sim-only"]:
        json.dump(sim_side(), open(args[1], "w"), indent=1)
        return
    if args[:1] == ["--sim"]:
        rows, args = json.load(open(args[1])), args[2:]
    else:
        rows = sim_side()
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    known = subprocess.run([NCU, "--query-metrics"], capture_output=True, text=True).stdout
    for r, (puzzle, kernel, small, full) in zip(rows, KERNELS):
        r["measured"] = measured(puzzle, kernel, full)
        print(r["kernel"], "measured", r["measured"], flush=True)
    for r, (puzzle, kernel, small, full) in zip(rows, KERNELS):
        r["ncu"] = ncu_counts(puzzle, kernel, small, known)
        print(r["kernel"], "ncu", r["ncu"], flush=True)
    text = table(rows, gpu)
    print(text)
    if args:
        os.makedirs(args[0], exist_ok=True)
        open(os.path.join(args[0], "profile_vs_ncu.md"), "w").write(text)
        json.dump({"gpu": gpu, "rows": rows}, open(os.path.join(args[0], "profile_vs_ncu.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
