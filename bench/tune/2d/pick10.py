"""Picks puzzle 10's candidate from a harness table: the p10-cand-* row that passed every check
with the smallest worst ratio to the targets (3x3 <= 60 us, 15x15 <= 190 us), printed as its
file name (B0.cu, A0.cu, ...). Usage: python3 pick10.py harness.txt"""
import re
import sys

best = None
for line in open(sys.argv[1]):
    m = re.match(r"p10-cand-(\w+)\s+ok\s", line)
    if not m:
        continue
    t = dict((k, float(v)) for k, v in re.findall(r"(\d+x\d+)\s+([\d.]+) us", line.replace("4096x4096 ", "").replace("8192x8192 ", "")))
    score = max(t["3x3"] / 60, t["15x15"] / 190)
    print(f"{m[1]}: 3x3 {t['3x3']} 15x15 {t['15x15']} score {score:.3f}", file=sys.stderr)
    if best is None or score < best[0]:
        best = (score, m[1])
print(f"{best[1]}.cu")
