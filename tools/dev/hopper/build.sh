#!/bin/sh
# Builds tools/dev/hopper/test_hopper (sm_90a) into ${OUTDIR:-build-hopper}; run from the repo root.
set -e
O=${OUTDIR:-build-hopper}
mkdir -p "$O"
F="-std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -I gpu -I gpu/variants -I gpu/variants/hopper -I layers"
nvcc $F -c gpu/variants/hopper/wgmma_cpasync.cu -o "$O/wgmma_cpasync.o" > "$O/ptxas_cpasync.txt" 2>&1 &
nvcc $F -c gpu/variants/hopper/wgmma_tma.cu -o "$O/wgmma_tma.o" > "$O/ptxas_tma.txt" 2>&1 &
nvcc $F -c gpu/variants/hopper/wgmma_ws.cu -o "$O/wgmma_ws.o" > "$O/ptxas_ws.txt" 2>&1 &
nvcc $F -c tools/dev/hopper/test_hopper.cu -o "$O/test_hopper.o" > "$O/ptxas_test.txt" 2>&1 &
nvcc -std=c++17 -O2 -I gpu -I layers -c gpu/cuda_check.cpp -o "$O/cuda_check.o"
nvcc -std=c++17 -O2 -I gpu -I layers -I /usr/include -c gpu/tolerance.cpp -o "$O/tolerance.o"
wait
nvcc -gencode=arch=compute_90a,code=sm_90a -o "$O/test_hopper" "$O/test_hopper.o" "$O/wgmma_cpasync.o" "$O/wgmma_tma.o" "$O/wgmma_ws.o" "$O/cuda_check.o" "$O/tolerance.o" -lcublas -Xlinker -rpath=/usr/local/cuda/lib64
grep -E "warning|error" "$O"/ptxas_*.txt || true
echo built "$O/test_hopper"
