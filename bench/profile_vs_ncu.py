#!/usr/bin/env python3
"""`runner profile` against the device, in one call (issue 18).

For the solutions of puzzles 01 and 04 to 08 and a naive kernel (bench/naive_p04.cu, puzzle 04's
contract): the global requests and sectors and the shared requests and wavefronts that `runner
profile --case CASE` counts in the simulator (its `exact:` line), beside what `ncu` measures for
the same small case run by
`runner check --backend gpu --case CASE`; and the time `runner profile` predicts for the full case
beside the median `runner bench` measures. Prints a Markdown table (and writes it to OUT/ if
given). Run on a GPU machine from the repository root:

    RUNNER=target/release/runner python3 bench/profile_vs_ncu.py [OUT_DIR]
"""
import csv, io, os, re, subprocess, sys

R = os.environ.get("RUNNER", "target/release/runner")
ROOT = os.environ.get("ROOT")
NCU = os.environ.get("NCU", "ncu")
KERNELS = [
    ("puzzle-01", "solutions/puzzle-01.cu", "large"),
    ("puzzle-04", "solutions/puzzle-04.cu", "random-halo"),
    ("puzzle-05", "solutions/puzzle-05.cu", "random-halo"),
    ("puzzle-06", "solutions/puzzle-06.cu", "random-halo"),
    ("puzzle-07", "solutions/puzzle-07.cu", "random-halo"),
    ("puzzle-08", "solutions/puzzle-08.cu", "random-halo"),
    ("puzzle-04", "bench/naive_p04.cu", "random-halo"),
]
METRICS = [
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_shared_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
]


def runner(*args, timeout=300):
    cmd = [R] + (["--root", ROOT] if ROOT else []) + ["--color", "never"] + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p.stdout + p.stderr


def sim_counts(puzzle, kernel, case):
    out = runner("profile", puzzle, "--kernel", kernel, "--case", case)
    row = next((l.split() for l in out.splitlines() if l.startswith("kernel")), None)
    exact = re.search(r"exact: (\d+) global requests, (\d+) sectors, (\d+) shared requests, (\d+) wavefronts", out)
    if exact:
        req, sec, sreq, wav = map(int, exact.groups())
        return {"global_req": req, "sectors_per_req": sec / req if req else None,
                "shared_req": sreq, "wavefronts_per_req": wav / sreq if sreq else None,
                "sectors": sec, "wavefronts": wav}, out
    if not row:
        return None, out
    si = lambda s: float(s[:-1]) * {"k": 1e3, "M": 1e6, "G": 1e9}[s[-1]] if s[-1] in "kMG" else float(s)
    f = lambda s: None if s == "-" else float(s)
    return {"global_req": si(row[3]), "sectors_per_req": f(row[4]),
            "shared_req": si(row[5]), "wavefronts_per_req": f(row[6])}, out


def ncu_counts(puzzle, kernel, case):
    cmd = [NCU, "--target-processes", "all", "--csv", "--metrics", ",".join(METRICS), R] + \
        (["--root", ROOT] if ROOT else []) + \
        ["check", puzzle, "--kernel", kernel, "--backend", "gpu", "--case", case]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    text = p.stdout[p.stdout.find('"ID"'):] if '"ID"' in p.stdout else ""
    m = {}
    for r in csv.DictReader(io.StringIO(text)):
        if r.get("Kernel Name", "").startswith("conv1d"):
            v = r["Metric Value"].replace(",", "")
            m[r["Metric Name"]] = m.get(r["Metric Name"], 0.0) + (float(v) if v not in ("", "n/a") else 0.0)
    if not m:
        return None, p.stdout[-2000:] + p.stderr[-2000:]
    g = lambda k: m.get(k, 0.0)
    req = sum(g(f"l1tex__t_requests_pipe_lsu_mem_global_op_{o}.sum") for o in ("ld", "st", "ldgsts"))
    sec = sum(g(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{o}.sum") for o in ("ld", "st", "ldgsts"))
    sreq = g("smsp__inst_executed_op_shared_ld.sum") + g("smsp__inst_executed_op_shared_st.sum")
    wav = g("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum") + \
        g("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
    return {"global_req": req, "sectors_per_req": sec / req if req else None,
            "shared_req": sreq, "wavefronts_per_req": wav / sreq if sreq else None,
            "sectors": sec, "wavefronts": wav}, ""


def predicted(puzzle, kernel):
    out = runner("profile", puzzle, "--kernel", kernel)
    m = re.search(r"predicted on an .*?: ([0-9.]+) us, ([a-z-]+)", out)
    return (float(m.group(1)), m.group(2)) if m else (None, out[-500:])


def measured(puzzle, kernel):
    if puzzle == "puzzle-01":
        return None  # runner bench times puzzles 04 to 08
    out = runner("bench", puzzle, "--kernel", kernel, "--runs", "20", "--json")
    try:
        import json
        e = json.loads(out[out.find("{"):])["entries"]
        return next(x["median_us"] for x in e if x["file"].endswith(kernel))
    except Exception:
        print(out[-800:], file=sys.stderr)
        return None


def fmt(x, d=2):
    return "-" if x is None else f"{x:.{d}f}"


def main():
    rows = ["| kernel | case | global req sim/ncu | sectors sim/ncu | shared req sim/ncu "
            "| wavefronts sim/ncu | predicted us (bound) | bench us | predicted/bench |",
            "|---|---|---|---|---|---|---|---|---|"]
    for puzzle, kernel, case in KERNELS:
        s, slog = sim_counts(puzzle, kernel, case)
        n, nlog = ncu_counts(puzzle, kernel, case)
        if s is None:
            print(f"{kernel}: profile failed:\n{slog}", file=sys.stderr)
        if n is None:
            print(f"{kernel}: ncu failed:\n{nlog}", file=sys.stderr)
        s, n = s or {}, n or {}
        p, bound = predicted(puzzle, kernel)
        b = measured(puzzle, kernel)
        ratio = fmt(p / b) if p and b else "-"
        rows.append(f"| {kernel} | {case} | {fmt(s.get('global_req'), 0)} / {fmt(n.get('global_req'), 0)} "
                    f"| {fmt(s.get('sectors'), 0)} / {fmt(n.get('sectors'), 0)} "
                    f"| {fmt(s.get('shared_req'), 0)} / {fmt(n.get('shared_req'), 0)} "
                    f"| {fmt(s.get('wavefronts'), 0)} / {fmt(n.get('wavefronts'), 0)} "
                    f"| {fmt(p, 1)} ({bound if p else '-'}) | {fmt(b, 1)} | {ratio} |")
        print(rows[-1], flush=True)
    table = "\n".join(rows) + "\n"
    print(table)
    if len(sys.argv) > 1:
        os.makedirs(sys.argv[1], exist_ok=True)
        open(os.path.join(sys.argv[1], "profile_vs_ncu.md"), "w").write(table)


if __name__ == "__main__":
    main()
