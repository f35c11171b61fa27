#!/usr/bin/env python3
"""`runner profile` against the device on the corpora's correct kernels (issue 36).

`bench/profile_vs_ncu.py --corpus ...` runs this. For every correct kernel of the project's corpora
(the solutions, `bench/naive_p04.cu`, `runner/tests/fixtures/variants`, `pipelines`'s correct
kernel, `broken_igemm/p11_ok.cu` and the learners' first kernels of
`runner/tests/fixtures/learners`):
- predicted: what `runner profile --case FULL` predicts for each full-scale case, with its six
  bounds (the latency bound is the issue bound where `runner profile` names none), the stores
  that follow a tensor kernel's products and the queued time (zero where it is not the
  prediction), and the profile's kernel row for the first full case (the case `runner profile` picks);
- measured: the median of `runner bench --runs 20` (a lineup's other kernels, the solution and
  the baseline, are kept from the same call rather than benched again; puzzle 01, which `runner
  bench` does not time, by ncu's gpu__time_duration);
- ncu: on the first full case, `runner check --backend gpu --case FULL` under ncu with the warp
  state, occupancy, memory and compute sections (stall reasons, achieved occupancy, L2 and DRAM
  bytes, shared wavefronts and bank conflicts, issue slot use, tensor pipe use), every metric kept.

    RUNNER=target/release/runner python3 bench/profile_vs_ncu.py --corpus --sim-only sim.json
    RUNNER=... python3 bench/profile_vs_ncu.py --corpus --sim sim.json OUT_DIR    # on the GPU
    RUNNER=... python3 bench/profile_vs_ncu.py --corpus --stored bench/profile_corpus.json OUT_DIR
    python3 bench/profile_vs_ncu.py --corpus --merge bench/profile_corpus.json NEW.json

The third redoes the predictions (no GPU) for the kernels as they were when measured (`kernels_at`,
or a row's own where it was measured again later). With `ONLY=FILE,FILE` the first two take only
those kernels; the last puts the rows of such a run (NEW.json, an OUT_DIR's profile_corpus.json)
in place of the stored rows of the same kernels, each with the commit it was measured at.
OUT_DIR receives profile_corpus.md (the table) and profile_corpus.json (every number); with
`NCU_RAW=DIR` each ncu CSV is also kept there. With `NCU_PUZZLES=puzzle-01,...` the second runs
ncu only on those puzzles' kernels (puzzle 01's time comes from ncu), to save device time; the
other rows then have no `ncu`, and `--merge` keeps the stored row's, with `ncu_at` naming the
commit (and `ncu_gpu` the device) it was measured at.
"""
import csv, io, json, os, re, subprocess, sys, tempfile

import profile_vs_ncu as base

FULL_11 = ["full-n16-64x64-ic64-oc128", "full-n32-56x56-ic64-oc64", "full-n8-128x128-ic128-oc128"]
FULL = {"puzzle-09": base.FULL_2D, "puzzle-10": base.FULL_2D, "puzzle-11": FULL_11}
L, V = "runner/tests/fixtures/learners/", "runner/tests/fixtures/variants/"
# (puzzle, kernel file): the learners' first, then the other corpora, then the solutions (whose
# times mostly come with a lineup already benched).
CORPUS = [
    ("puzzle-09", L + "p09_naive.cu"),
    ("puzzle-10", L + "p10_staged.cu"),
    ("puzzle-10", L + "p10_register_window.cu"),
    ("puzzle-11", L + "p11_wmma.cu"),
    ("puzzle-11", L + "p11_mma_ldmatrix.cu"),
    ("puzzle-12", L + "p12_staged_split.cu"),
    ("puzzle-11", "runner/tests/fixtures/pipelines/p11_wmma_double_buffer.cu"),
    ("puzzle-11", "runner/tests/fixtures/broken_igemm/p11_ok.cu"),
    ("puzzle-01", V + "puzzle-01.persistent.cu"),
    ("puzzle-04", V + "puzzle-04.float4-tile.cu"),
    ("puzzle-05", V + "puzzle-05.bulk-tile.cu"),
    ("puzzle-08", V + "puzzle-08.scalar.cu"),
    ("puzzle-04", "bench/naive_p04.cu"),
] + [(f"puzzle-{n:02}", f"solutions/puzzle-{n:02}.cu") for n in (1, 4, 5, 6, 7, 8, 9, 10, 11, 12)] + [
    ("puzzle-11", "solutions/puzzle-11-hopper.cu"),
    ("puzzle-12", "solutions/puzzle-12-hopper.cu"),
]
if os.environ.get("ONLY"):
    CORPUS = [c for c in CORPUS if c[1] in os.environ["ONLY"].split(",")]
SECTIONS = ["SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats", "SchedulerStats",
            "MemoryWorkloadAnalysis", "ComputeWorkloadAnalysis"]
EXTRA = ["gpu__time_duration.sum", "smsp__inst_executed.sum", "smsp__issue_active.avg.pct_of_peak_sustained_active",
         "sm__warps_active.avg.pct_of_peak_sustained_active", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
         "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active", "dram__bytes.sum", "lts__t_bytes.sum",
         "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
         "smsp__cycles_active.avg", "sm__cycles_elapsed.avg"]
# The metrics kept of each ncu run: the launch, and each metric's sum, average or ratio (not its
# min and max over units, nor the device's attributes).
KEEP = re.compile(r"^launch__|^(Kernel Name|Block Size|Grid Size)$|\.(sum|avg|ratio|pct)$|"
                  r"\.avg\.(pct_of_peak_sustained_active|per_cycle_active|per_second)$|\.sum\.per_cycle_active$")
BOUNDS = re.compile(r"predicted on an .*?: ([0-9.]+) us, ([a-z-]+).*?\(issue ([0-9.]+) us(?:, latency ([0-9.]+) us)?, shared ([0-9.]+) us, "
                    r"constant ([0-9.]+) us, memory ([0-9.]+) us(?:, tensor ([0-9.]+) us)?"
                    r"(?:, then stores ([0-9.]+) us)?(?:, all queued ([0-9.]+) us)?\)")


def fulls(puzzle):
    return FULL.get(puzzle, base.FULL_1D)


def profiled(puzzle, kernel, case):
    out = base.runner("profile", puzzle, "--kernel", kernel, "--case", case)
    m = BOUNDS.search(out)
    if not m:
        print(f"{kernel} {case}: no prediction:\n{out[-1500:]}", file=sys.stderr)
        return None
    # The latency bound is printed only where it exceeds the issue bound, the queued time only
    # where it exceeds every bound (it is then the prediction).
    keys = ("issue", "latency", "shared", "constant", "memory", "tensor", "stores", "queued")
    p = {"us": float(m.group(1)), "bound": m.group(2), **dict(zip(keys, (float(g or 0) for g in m.groups()[2:])))}
    p["latency"] = p["latency"] or p["issue"]
    row = [l for l in out.splitlines() if l.startswith("kernel ") or l.startswith("simulated ")
           or l.startswith("instruction mix") or l.startswith("occupancy") or l.startswith(puzzle)]
    return p, row


def sim_side(at=None):
    """Predictions for the corpus; `at`: the commit of every kernel file, or {kernel: commit}."""
    rows, tmp = [], tempfile.mkdtemp()
    for puzzle, kernel in CORPUS:
        path, at_k = kernel, at.get(kernel) if isinstance(at, dict) else at
        if at_k:
            path = os.path.join(tmp, kernel.replace("/", "_"))
            src = subprocess.run(["git", "show", f"{at_k}:{kernel}"], capture_output=True, text=True).stdout
            if not src:
                continue
            open(path, "w").write(src)
        row = {"puzzle": puzzle, "kernel": kernel, "predicted": {}}
        for c in fulls(puzzle):
            got = profiled(puzzle, path, c)
            row["predicted"][c] = got[0] if got else None
            if got and c == fulls(puzzle)[0]:
                row["profile"] = got[1]
        rows.append(row)
        print(json.dumps(row["predicted"]), kernel, file=sys.stderr, flush=True)
    return rows


def bench(puzzle, kernel, seen):
    """Median us per full case of `kernel`, from `seen` (earlier lineups) or a new `runner bench`."""
    if kernel in seen:
        return seen[kernel]
    out = base.runner("bench", puzzle, "--kernel", kernel, "--runs", "20", "--json")
    try:
        o = json.loads(out[out.find("{"):])
    except ValueError:
        print(f"bench {kernel}: {out[-1500:]}", file=sys.stderr)
        return {}
    shapes = o["shapes"] if "shapes" in o else [{"case": fulls(puzzle)[0], "entries": o["entries"]}]
    for s in shapes:
        for e in s["entries"]:
            # The lineup's first entry is the kernel asked for; the others are solutions or a baseline.
            key = kernel if e is s["entries"][0] else next((k for _, k in CORPUS if e["file"].endswith(k)), None)
            if key:
                seen.setdefault(key, {})[s["case"]] = e["median_us"]
    return seen.get(kernel, {})


def ncu_full(puzzle, kernel, raw_dir):
    """Every metric of SECTIONS and EXTRA for one launch of `kernel` on its first full case."""
    env = dict(os.environ, CONV_WORKBOOK_WORKER_IDLE="1", CUDA_VISIBLE_DEVICES=os.environ.get("NCU_GPU", "0"))
    cmd = [base.NCU, "--target-processes", "all", "--clock-control", "none", "-k", "regex:conv", "-c", "1",
           "--csv", "--page", "raw", "--print-units", "base"] + sum((["--section", s] for s in SECTIONS), []) + [
           "--metrics", ",".join(EXTRA), base.R] + (["--root", base.ROOT] if base.ROOT else []) + [
           "--color", "never", "check", puzzle, "--kernel", kernel, "--backend", "gpu", "--case", fulls(puzzle)[0]]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=150, env=env)
    except subprocess.TimeoutExpired as e:
        print(f"ncu {kernel}: timed out", file=sys.stderr)
        return None
    if raw_dir:
        open(os.path.join(raw_dir, kernel.replace("/", "_") + ".csv"), "w").write(p.stdout + "\n" + p.stderr[-3000:])
    return parse_raw(p.stdout) or print(f"ncu {kernel}: {p.stdout[-800:]}{p.stderr[-800:]}", file=sys.stderr)


def parse_raw(text):
    """The first kernel's metrics from ncu's `--page raw --csv` (a header, a units row, a row per kernel)."""
    start = text.find('"ID"')
    if start < 0:
        return None
    rows = list(csv.reader(io.StringIO(text[start:])))
    if len(rows) < 3:
        return None
    out = {}
    for name, unit, value in zip(rows[0], rows[1], rows[2]):
        if not KEEP.search(name) or name.startswith("device__"):
            continue
        v = value.replace(",", "")
        try:
            out[name] = float(v)
        except ValueError:
            out[name] = value
    return out


def table(rows, gpu):
    return "\n".join(base.times_table(rows, f"against `runner bench` ({gpu})")) + "\n"


def write(dir_, rows, gpu, at):
    text = table(rows, gpu)
    print(text)
    os.makedirs(dir_, exist_ok=True)
    open(os.path.join(dir_, "profile_corpus.md"), "w").write(text)
    json.dump({"gpu": gpu, "kernels_at": at, "rows": rows}, open(os.path.join(dir_, "profile_corpus.json"), "w"), indent=1)


def main(args):
    if args[:1] == ["--sim-only"]:
        json.dump(sim_side(), open(args[1], "w"), indent=1)
        return
    if args[:1] == ["--stored"]:
        stored = json.load(open(args[1]))
        old = {r["kernel"]: r for r in stored["rows"]}
        at = {k: r.get("kernels_at", stored.get("kernels_at")) for k, r in old.items()}
        rows = [r for r in sim_side(at) if r["kernel"] in old]
        for r in rows:
            for key in ("measured", "ncu", "kernels_at", "gpu", "ncu_at", "ncu_gpu"):
                if key in old[r["kernel"]]:
                    r[key] = old[r["kernel"]][key]
        write(args[2], rows, stored["gpu"], stored.get("kernels_at"))
        return
    if args[:1] == ["--merge"]:
        stored, new = json.load(open(args[1])), json.load(open(args[2]))
        again = {r["kernel"]: dict(r, kernels_at=new["kernels_at"], gpu=new["gpu"]) for r in new["rows"]}
        for r in stored["rows"]:
            a = again.get(r["kernel"])
            if a is not None and "ncu" not in a and r.get("ncu"):
                a["ncu"] = r["ncu"]
                a["ncu_at"] = r.get("ncu_at", r.get("kernels_at", stored.get("kernels_at")))
                a["ncu_gpu"] = r.get("ncu_gpu", r.get("gpu", stored["gpu"]))
        stored["rows"] = [again.get(r["kernel"], r) for r in stored["rows"]]
        json.dump(stored, open(args[1], "w"), indent=1)
        return
    rows = json.load(open(args[1])) if args[:1] == ["--sim"] else sim_side()
    out_dir = args[2] if args[:1] == ["--sim"] else args[0]
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    seen = {}
    for r in rows:
        if r["puzzle"] != "puzzle-01":
            r["measured"] = bench(r["puzzle"], r["kernel"], seen)
        print(r["kernel"], "measured", r.get("measured"), flush=True)
        write(out_dir, rows, gpu, os.environ.get("KERNELS_AT"))
    raw = os.environ.get("NCU_RAW")
    only = os.environ.get("NCU_PUZZLES")
    for r in rows:
        if only and r["puzzle"] not in only.split(","):
            continue
        r["ncu"] = ncu_full(r["puzzle"], r["kernel"], raw)
        n = r["ncu"] or {}
        if r["puzzle"] == "puzzle-01" and "gpu__time_duration.sum" in n:
            r["measured"] = {fulls("puzzle-01")[0]: n["gpu__time_duration.sum"] / 1e3}
        print(r["kernel"], "ncu", n.get("gpu__time_duration.sum"), flush=True)
        write(out_dir, rows, gpu, os.environ.get("KERNELS_AT"))
