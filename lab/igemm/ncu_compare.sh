#!/usr/bin/env bash
# Device: the same ncu metrics for the solution's TMA option and cuDNN's tf32 kernel on N8 (round 15).
# Usage: bash lab/igemm/ncu_compare.sh $OUT   (after wgmma/run.sh built /tmp/wg/tma)
OUT=${1:-/tmp/out}; mkdir -p $OUT
cd "$(dirname "$0")"
M=gpu__time_duration.sum,sm__cycles_active.avg,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sector_hit_rate.pct,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__cluster_dim_x
for clock in base none; do
  ncu --clock-control $clock -k conv2d_nhwc --launch-skip 113 -c 1 --metrics $M /tmp/wg/tma tma > $OUT/ncu15-tma-$clock.txt 2>&1
  ncu --clock-control $clock -k regex:fprop --launch-skip 5 -c 1 --metrics $M python3 cudnn_n8.py > $OUT/ncu15-cudnn-$clock.txt 2>&1
  for f in tma cudnn; do echo "== $f clock=$clock"; grep -E "^\s+(gpu__|sm__|dram__|lts__|l1tex__|smsp__|launch__)" $OUT/ncu15-$f-$clock.txt; grep -m1 -E "fprop|conv2d_nhwc" $OUT/ncu15-$f-$clock.txt; done
done
