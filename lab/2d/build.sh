#!/usr/bin/env bash
# Builds harness2d (lab/2d/harness2d.cu) with every variant listed in variants.txt, on any
# machine with nvcc 13 (no GPU needed; the binary is x86-64, cudart static): each variant is its
# own object, its kernel renamed conv2d_<n> through -D, so the files need no change.
# Also writes the ptxas resource line of each variant to $BUILD/resources.txt.
# Usage: lab/2d/build.sh [variants.txt] -> $BUILD/harness2d (BUILD defaults to /tmp/h2d)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
list=${1:-$here/variants.txt}
build=${BUILD:-/tmp/h2d}
rm -rf "$build" && mkdir -p "$build/gen"
: > "$build/gen/decls.inc"
: > "$build/gen/table.inc"
: > "$build/resources.txt"
n=0
jobs=()
while IFS='|' read -r name puzzle file macros; do
    trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; echo "${s%"${s##*[![:space:]]}"}"; }
    name=$(trim "$name"); [ -z "$name" ] && continue; [ "${name:0:1}" = "#" ] && continue
    puzzle=$(trim "$puzzle"); file=$(trim "$file")
    n=$((n + 1))
    src="$build/gen/v$n.cu"
    {
        case $file in /*) echo "#include \"$file\"" ;; *) echo "#include \"$root/$file\"" ;; esac
        echo "extern \"C\" const void* fn_v$n() { return (const void*)conv2d; }"
        if [ "$puzzle" = 10 ]; then
            echo "extern \"C\" void shape_v$n(int* s) { cudaMemcpyFromSymbol(s, launch_shape, 16); }"
        fi
    } > "$src"
    echo "extern \"C\" const void* fn_v$n();" >> "$build/gen/decls.inc"
    if [ "$puzzle" = 10 ]; then
        echo "extern \"C\" void shape_v$n(int*);" >> "$build/gen/decls.inc"
        echo "{\"$name\", 10, fn_v$n, shape_v$n, 0, 0}," >> "$build/gen/table.inc"
    else
        rb=$(echo "$macros" | sed -E 's/.*-DROW_BLOCK=([0-9]+).*/\1/')
        cb=$(echo "$macros" | sed -E 's/.*-DCOL_BLOCK=([0-9]+).*/\1/')
        echo "{\"$name\", 9, fn_v$n, nullptr, $rb, $cb}," >> "$build/gen/table.inc"
    fi
    ( nvcc -std=c++17 -arch=sm_90 -O3 -c "$src" -o "$build/v$n.o" -Dconv2d=conv2d_v$n -Dlaunch_shape=launch_shape_v$n \
        $macros -Xptxas -v 2> "$build/v$n.log" || { cat "$build/v$n.log"; exit 1; } ) &
    jobs+=($!)
    if [ ${#jobs[@]} -ge ${JOBS:-2} ]; then wait "${jobs[0]}"; jobs=("${jobs[@]:1}"); fi
    echo "$n|$name" >> "$build/names.txt"
done < "$list"
for j in "${jobs[@]}"; do wait "$j"; done
while IFS='|' read -r i name; do
    printf '%-34s %s\n' "$name" "$(grep -E 'Used' "$build/v$i.log" | sed 's/ptxas info    : //')" >> "$build/resources.txt"
    grep -q "spill stores" "$build/v$i.log" && grep -E "[1-9][0-9]* bytes spill" "$build/v$i.log" | sed "s/^/$name: /" >> "$build/resources.txt" || true
done < "$build/names.txt"
nvcc -std=c++17 -arch=sm_90 -O3 -I"$build" ${NVCC_LINK_FLAGS:-} "$here/harness2d.cu" "$build"/v*.o -o "$build/harness2d"
strip "$build/harness2d"
echo "built $build/harness2d with $n variants"
