"""Picks puzzle 10's candidate from a harness table: the p10-cand-* row that passed every check
with the smallest total miss of the targets (3x3 <= 60 us, 15x15 <= 190 us), the sum over both of
max(0, time / target - 1), then the faster 8192^2 5x5; printed as its file name (B0.cu, C1.cu, ...).
(Round 5 used the worst ratio instead, which picked B0 over A0 by 0.4 us at 3x3 against 15 us at
15x15.) Usage: python3 pick10.py harness.txt"""
import re
import sys

best = None
for line in open(sys.argv[1]):
    m = re.match(r"p10-cand-(\w+)\s+ok\s", line)
    if not m:
        continue
    t = dict((k, float(v)) for k, v in re.findall(r"(\d+x\d+)\s+([\d.]+) us", line.replace("4096x4096 ", "").replace("8192x8192 ", "")))
    score = (max(0.0, t["3x3"] / 60 - 1) + max(0.0, t["15x15"] / 190 - 1), t["5x5"])
    print(f"{m[1]}: 3x3 {t['3x3']} 15x15 {t['15x15']} miss {score[0]:.3f}", file=sys.stderr)
    if best is None or score < best[0]:
        best = (score, m[1])
print(f"{best[1]}.cu")
