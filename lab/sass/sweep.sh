#!/bin/bash
# Builds each line of $VARIANTS (name macros...) from exp/p08x.cu to a cubin and prints its inner-loop
# statistics (sass/rf.py). nvcc/cuobjdump/nvdisasm 13.0 on PATH (PyPI: nvidia-cuda-nvcc==13.0.*,
# nvidia-cuda-runtime, nvidia-cuda-crt, nvidia-nvvm==13.0.*, nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm).
# usage: VARIANTS=list.txt sass/sweep.sh > sweep.out; python3 sass/model.py sweep.out
cd "$(dirname "$0")/.."
b=${SASS_OUT:-/tmp/sass}; mkdir -p $b; export b
one() {
  name=$1; shift
  nvcc -arch=sm_90 -O3 -std=c++17 -cubin -Xptxas -v -x cu "$@" exp/p08x.cu -o $b/s_$name.cubin > $b/s_$name.log 2>&1
  cuobjdump -sass $b/s_$name.cubin > $b/s_$name.sass
  regs=$(grep -o "Used [0-9]* registers" $b/s_$name.log | head -1)
  st=$(python3 sass/rf.py $b/s_$name.sass | grep conv1d | head -1)
  echo "$name|$*|$regs|$st"
}
export -f one
xargs -P 3 -L 1 bash -c 'one "$@"' _ < "$VARIANTS"
