#!/bin/bash
# On the device: bash lab/igemm/tma/probe.sh
set -e
cd "$(dirname "$0")"
nvcc -gencode arch=compute_90a,code=sm_90a -cubin -o probe.cubin probe.cu
nvcc -gencode arch=compute_90a,code=sm_90a -o probe probe.cu -lcuda
./probe
