#!/usr/bin/env bash
# Builds conv_tune.cu once per variant below and runs each: `./tune.sh` on the GPU machine
# (nvcc, sm_90), `./tune.sh emu` on any machine with g++ (checks only, through emu.h).
# Logs and the table go to ${OUT:-/tmp/conv_tune}; the table is printed last.
set -u
cd "$(dirname "$0")"
mode=${1:-gpu}
out=${OUT:-/tmp/conv_tune}
build=$(mktemp -d)
mkdir -p "$out"

# name | puzzle | macros (the puzzles' launch macros; 08 overrides its own defaults) [| source, when
# not the puzzle's solution]. VARIANTS replaces the list (p12/run.sh).
variants=${VARIANTS:-"
p04-tpb512|4|-DTPB=512
p04-tpb128|4|-DTPB=128
p05-tpb512|5|-DTPB=512
p05-tpb128|5|-DTPB=128
p06-tpb512-opt8|6|-DTPB=512 -DOUTPUTS_PER_THREAD=8
p06-tpb128-opt16|6|-DTPB=128 -DOUTPUTS_PER_THREAD=16
p06-tpb64-opt16|6|-DTPB=64 -DOUTPUTS_PER_THREAD=16
p07-bs2048-kb4|7|-DBLOCK_SIZE=2048 -DK_BLOCK=4 -DTHREADS=128
p08-t160-r12|8|-DTHREADS=160 -DPER_THREAD=12
p08-t128-r18|8|-DTHREADS=128 -DPER_THREAD=18
p08-default|8|
"}
[ -n "${ONLY:-}" ] && variants=$(echo "$variants" | grep -E "$ONLY")

if [ "$mode" = emu ]; then
    status=0
    while IFS='|' read -r name puzzle macros; do
        [ -z "$name" ] && continue
        # emu.h has one static buffer for dynamic shared memory: point the declaration at it.
        sed -E 's/extern __shared__ ([a-z0-9]+) ([a-z_]+)\[\];/\1* \2 = reinterpret_cast<\1*>(emu_dynamic_shared);/' \
            ../solutions/puzzle-0$puzzle.cu > "$build/$name.cu"
        [ "$puzzle" = 7 ] && [ -z "${macros##*2048*}" ] && macros="-DBLOCK_SIZE=64 -DK_BLOCK=4 -DTHREADS=32"
        g++ -std=c++20 -O2 -w -x c++ -DEMU -DPUZZLE=$puzzle -DSOLUTION="\"$build/$name.cu\"" $macros -I. \
            conv_tune.cu -o "$build/$name" -pthread || { status=1; continue; }
        "$build/$name" || status=1
    done <<< "$variants"
    exit $status
fi

nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv | tee "$out/gpu.txt"
nvcc --version | tail -1
while IFS='|' read -r name puzzle macros src; do
    [ -z "$name" ] && continue
    [ -z "$src" ] && printf -v src '../solutions/puzzle-%02d.cu' "$puzzle"
    nvcc -arch=sm_90 -O3 -std=c++17 -lineinfo -Xptxas -v -DPUZZLE=$puzzle \
        -DSOLUTION="\"$src\"" $macros conv_tune.cu -o "$build/$name" \
        > "$build/$name.log" 2>&1 &
done <<< "$variants"
wait
peak=$("$build/$(echo "$variants" | grep -m1 . | cut -d'|' -f1)" peak 2>>"$out/gpu.txt")
tail -1 "$out/gpu.txt"
{
    echo "| variant | grid x block, shared | median us | min .. max us | GFLOP/s | of peak |"
    echo "|---|---|---|---|---|---|"
    while IFS='|' read -r name puzzle macros src; do
        [ -z "$name" ] && continue
        if [ ! -x "$build/$name" ]; then echo "| $name | build failed |"; cat "$build/$name.log" >&2; continue; fi
        "$build/$name" "$name" "$peak"
    done <<< "$variants"
} | tee "$out/table.md"
for f in "$build"/*.log; do echo "== $f"; grep -E "registers|spill" "$f" | grep -B1 -A0 conv1d -m4; grep -E "Used|spill" "$f"; done > "$out/ptxas.txt" 2>&1
grep -H "Used" "$build"/*.log | sed 's|.*/||' | cut -c1-160
if command -v cuobjdump > /dev/null; then
    for v in p08-default ${SASS:-}; do
        [ -x "$build/$v" ] && cuobjdump -sass "$build/$v" > "$out/sass-$v.txt" 2>&1
    done
fi
