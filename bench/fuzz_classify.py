"""Sorts the differences of a `runner fuzz --backend both --record FILE` run by cause (issue 36).

For each seed whose record holds the GPU's whole run (the seeds that differed), the simulator's
run is recorded again here (`runner fuzz --seed S --record`, no GPU) and every output word that
differs is traced to its variable through the kernel's stores (`--show`). A variable's
difference is one of: `nan64` (an f64 whose two runs are both NaN: which NaN an f64 operation
keeps is ptxas's slot order), `nan32-sign` (an f32 NaN differing in the sign alone: `neg.f32` of
a NaN folded into an FSEL), `nan32` (another f32 NaN payload), `contracted` (finite floats within
a few units in the last place: a mul and an add fused by ptxas), `int` (an integer: downstream of
one of the above, or not) or `other-float`. A seed's cause is its first float cause in that
order; a seed whose differences are all `int`, or that has an `other-float`, is printed whole
for a look. Printed lines that differ only in a NaN's sign are `nan-sign-printf`.

Run here (no GPU): python3 bench/fuzz_classify.py RECORD.jsonl [RUNNER]
"""

import json
import math
import re
import struct
import subprocess
import sys
import tempfile

ORDER = ["nan64", "nan32-sign", "nan32", "contracted", "other-float"]


def f32(w):
    return struct.unpack("<f", struct.pack("<I", w))[0]


def f64(lo, hi):
    return struct.unpack("<d", struct.pack("<Q", (hi << 32) | lo))[0]


def stores(code):
    """slot -> (variable, part): part is f32, lo, hi, int, int-hi."""
    out = {}
    for m in re.finditer(r"out\[gid \* SLOTS \+ (\d+)\] = (.*);", code):
        slot, e = int(m.group(1)), m.group(2)
        if e.startswith("__float_as_uint("):
            out[slot] = (e[16:-1], "f32")
        elif "__double2loint(" in e:
            out[slot] = (e.split("(")[-1].rstrip(")"), "lo")
        elif "__double2hiint(" in e:
            out[slot] = (e.split("(")[-1].rstrip(")"), "hi")
        else:
            out[slot] = (e, "int")
    return out


def ulps32(a, b):
    ia, ib = [struct.unpack("<i", struct.pack("<f", x))[0] for x in (a, b)]
    return abs(ia - ib)


def classify(code, sim, gpu, slots):
    kinds = set()
    threads = len(gpu) // slots
    for t in range(threads):
        row = {s: (sim[t * slots + s], gpu[t * slots + s]) for s in range(slots)}
        for s, (a, b) in row.items():
            if a == b:
                continue
            var, part = slots_of[s]
            if part == "f32":
                x, y = f32(a), f32(b)
                if math.isnan(x) and math.isnan(y):
                    kinds.add("nan32-sign" if (a ^ b) == 0x80000000 else "nan32")
                elif math.isfinite(x) and math.isfinite(y) and ulps32(x, y) <= 4:
                    kinds.add("contracted")
                else:
                    kinds.add("other-float")
            elif part in ("lo", "hi"):
                lo_s = [k for k, v in slots_of.items() if v == (var, "lo")][0]
                hi_s = [k for k, v in slots_of.items() if v == (var, "hi")][0]
                x = f64(row[lo_s][0], row[hi_s][0])
                y = f64(row[lo_s][1], row[hi_s][1])
                if math.isnan(x) and math.isnan(y):
                    kinds.add("nan64")
                elif math.isfinite(x) and math.isfinite(y) and abs(x - y) <= 1e-13 * max(abs(x), abs(y)):
                    kinds.add("contracted")
                else:
                    kinds.add("other-float")
            else:
                kinds.add(int_kind(var, s, row))
    return kinds


def int_kind(var, slot, row):
    """An integer variable holding a float's bits (`__double_as_longlong`, `__float_as_uint`)
    whose two runs are both NaNs is that float's NaN, and an f64's bits a few units apart are
    `contracted`; anything else is `int`."""
    m = re.search(r"\b([iulw]\d+)\b", var)
    name = m.group(1) if m else ""
    if name[:1] in ("l", "w"):
        lo = [k for k, v in slots_of.items() if v == (f"(unsigned)({name})", "int")]
        hi = [k for k, v in slots_of.items() if v == (f"(unsigned)(({name}) >> 32)", "int")]
        if lo and hi:
            x = f64(row[lo[0]][0], row[hi[0]][0])
            y = f64(row[lo[0]][1], row[hi[0]][1])
            if math.isnan(x) and math.isnan(y):
                return "nan64"
            # An f64's bits within a few units in the last place (seed 2,102,050: `d7 * d7 -
            # trunc(d7)` fused by ptxas into a DFMA, stored through `__double_as_longlong`).
            if math.isfinite(x) and math.isfinite(y) and abs(x - y) <= 1e-13 * max(abs(x), abs(y)):
                return "contracted"
    elif name[:1] in ("i", "u"):
        a, b = row[slot]
        if math.isnan(f32(a)) and math.isnan(f32(b)):
            return "nan32-sign" if (a ^ b) == 0x80000000 else "nan32"
    return "int"


def main():
    record, runner = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "target/release/runner"
    rows = [json.loads(l) for l in open(record) if l.strip()]
    rows = [r for r in rows if "words" in r or "lines" in r]
    tally, looks = {}, []
    global slots_of
    for r in rows:
        seed = r["seed"]
        code = subprocess.run([runner, "fuzz", "--seed", str(seed), "--show"], capture_output=True, text=True).stdout
        with tempfile.NamedTemporaryFile("r", suffix=".jsonl") as f:
            subprocess.run([runner, "fuzz", "--seed", str(seed), "--record", f.name], capture_output=True)
            sim = json.loads(f.read())
        slots = int(re.search(r"#define SLOTS (\d+)", code).group(1))
        slots_of = stores(code)
        kinds = classify(code, sim.get("words", []), r.get("words", []), slots)
        if r.get("lines", []) != sim.get("lines", []):
            pairs = zip(sorted(r.get("lines", [])), sorted(sim.get("lines", [])))
            nan_sign = all(a == b or a.replace("-nan", "nan") == b.replace("-nan", "nan") for a, b in pairs)
            kinds.add("nan-sign-printf" if nan_sign else "printf")
        cause = next((k for k in ORDER if k in kinds), None)
        if cause is None or "other-float" in kinds:
            cause = cause or ("nan-sign-printf" if "nan-sign-printf" in kinds else "look")
            looks.append((seed, sorted(kinds)))
        tally.setdefault(cause, []).append(seed)
        print(seed, cause, sorted(kinds), flush=True)
    print("\n| cause | kernels | seeds |\n|---|---|---|")
    for cause, seeds in sorted(tally.items(), key=lambda kv: -len(kv[1])):
        print(f"| {cause} | {len(seeds)} | {', '.join(map(str, seeds))} |")
    print("\nto look at:", looks)


if __name__ == "__main__":
    main()
