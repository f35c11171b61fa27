#!/usr/bin/env bash
# Device rounds 1 and 2 for puzzle 08 (lab/NOTES.md): FFMA operand microbenchmark, the solution and
# experimental variants (exp/p08x.cu) checked and timed, and ncu on the solution and the best
# predicted variant. Results under ${OUT:-/tmp/round1}; the table is printed last.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/round1}
mkdir -p "$out"
b=$(mktemp -d)
SOL=${SOL:-../solutions/puzzle-08.cu}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv > "$out/log.txt" 2>&1
nvcc --version | tail -1 >> "$out/log.txt"
X="-DSTAGE_U=0 -DVEC=2 -DSPLIT=2"
# Variants kept as patches of the solution (exp/README.md).
patch -s -o "$b/new_o1.cu" ../solutions/puzzle-08.cu exp/new_o1.patch
variants="base|$SOL|
new|../solutions/puzzle-08.cu|
new_o1|$b/new_o1.cu|
new2|../solutions/puzzle-08.cu|
x12stage|exp/p08x.cu|-DPER_THREAD=12 -DTHREADS=160 -DSTAGE_U=0 -DVEC=4 -DSPLIT=2 -DPF=0 -DORDER=0
x18u|exp/p08x.cu|-DPER_THREAD=18 -DTHREADS=640 $X -DPF=1 -DORDER=0
x18u1|exp/p08x.cu|-DPER_THREAD=18 -DTHREADS=640 $X -DPF=1 -DORDER=1
x30u|exp/p08x.cu|-DPER_THREAD=30 -DTHREADS=384 $X -DPF=1 -DORDER=1 -DTAIL=1
x30u0|exp/p08x.cu|-DPER_THREAD=30 -DTHREADS=384 $X -DPF=0 -DORDER=1 -DTAIL=1
x30n|exp/p08x.cu|-DPER_THREAD=30 -DTHREADS=192 $X -DPF=0 -DORDER=1 -DTAIL=1
x18n|exp/p08x.cu|-DPER_THREAD=18 -DTHREADS=640 $X -DPF=0 -DORDER=0
x18t128|exp/p08x.cu|-DPER_THREAD=18 -DTHREADS=128 $X -DPF=0 -DORDER=0
"
[ -n "${ONLY:-}" ] && variants=$(echo "$variants" | grep -E "$ONLY")
nvcc -arch=sm_90 -O3 fma_micro.cu -o "$b/micro" > "$b/micro.log" 2>&1 &
while IFS='|' read -r name sol macros; do
    [ -z "$name" ] && continue
    nvcc -arch=sm_90 -O3 -std=c++17 -lineinfo -Xptxas -v -DPUZZLE=8 -DSOLUTION="\"$sol\"" $macros conv_tune.cu \
        -o "$b/$name" > "$b/$name.log" 2>&1 &
done <<< "$variants"
wait
peak=$("$b/base" peak 2>>"$out/log.txt")
tail -1 "$out/log.txt"
"$b/micro" | tee "$out/micro.txt"
for f in "$b"/*.log; do echo "$(basename $f): $(grep -A1 "conv1d" $f | grep -o "Used [0-9]* registers" | head -1)"; done >> "$out/log.txt"
{
    echo "| variant | grid x block, shared | median us | min .. max us | GFLOP/s | of peak |"
    echo "|---|---|---|---|---|---|"
    while IFS='|' read -r name sol macros; do
        [ -z "$name" ] && continue
        if [ ! -x "$b/$name" ]; then echo "| $name | build failed |"; cat "$b/$name.log" >&2; continue; fi
        "$b/$name" "$name" "$peak"
    done <<< "$variants"
} > "$out/table.md"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
M="smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__issue_active.max.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__inst_executed_pipe_fma.sum,smsp__inst_executed_pipe_uniform.sum,smsp__cycles_active.max,smsp__cycles_active.avg,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum"
for v in ${NCU_VARIANTS:-base new}; do
    [ -x "$b/$v" ] || continue
    timeout 55 "$NCU" --clock-control none -k conv1d --launch-skip 20 --launch-count 1 \
        --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
        --metrics "$M,regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio" \
        "$b/$v" "$v" "$peak" > "$out/ncu_$v.txt" 2>&1
    grep -E "Issue Slots Busy|Issued Ipc|No Eligible|Warp Cycles Per Issued|issue_active|stalled_(short_scoreboard|math_pipe|dispatch|wait|not_selected|selected|no_inst|mio|barrier|long_sc|branch)|per_second|duration" "$out/ncu_$v.txt" | sed "s/^/$v: /" | cut -c1-140
done
cat "$out/log.txt" | tail -12
cat "$out/table.md"
