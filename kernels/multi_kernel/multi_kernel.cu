// multi-kernel family — the study's Mk, Mk-sw-mt, Mk-sw-mt-si-c and Mk-sw-mt-si-c-half
// (Mk-sw-mt-si-c-vec and exp-Mk-sw-mt-si-c-vec are in multi_kernel_vec.cu; the kernels,
// the workspace policy and the Plan of all six are in multi_kernel.cuh).
//
// Idea (study items 11-17): parallelise over the channels too. Kernel 1 runs an N x M x C
// grid (flattened onto x, see multi_kernel.cuh), each block computing ONE channel's
// contribution to an E x F output plane and writing it to a workspace of C*N*M*E*F
// partial sums; kernel 2 (N x M blocks) sums the workspace over C in a fixed order, so
// the result is deterministic. Both kernels are in Plan::run, so kernel_ms covers both.
// The variants add one idea each; all other code is shared (template flags):
//
//   variant (study)                 running sums   filter slice   input plane      mapping (t > 1)
//   mk (Mk)                         global memory  global         global           uncoalesced
//   mk-sw-mt (Mk-sw-mt)             registers      shared, all    global           uncoalesced
//                                                  threads load it
//   mk-sw-mt-si-c (Mk-sw-mt-si-c)   registers      shared         shared + zero    coalesced
//                                                                 halo, if it fits
//   mk-sw-mt-si-c-half              as si-c, on half data (multi_kernel_vec.cu has -vec
//     (Mk-sw-mt-si-c-half)          and exp-Mk-sw-mt-si-c-vec)
//
// Running sums, as the study built them (its Table 1): Mk has "lots of access to global
// memory", like the single-kernel baseline (Mcpy); "more registers" enters with Mk-sw-mt.
// So in mk each thread zeroes its workspace slot and then, for every tap, loads the slot,
// adds the product (the same fmaf) and stores it back — inline PTX ld.global / st.global,
// since with __restrict__ pointers the compiler could otherwise keep the sum in a register;
// the loads may hit L1. mk-sw-mt and the rest keep the sums in registers and store each
// once. Same products in the same order: mk and mk-sw-mt give the same bits (a GPU test
// checks it), so the mk -> mk-sw-mt step measures both of the study's ideas together
// (register sums and the shared filter), as the study's did.
//
// Shared input plane, decided at run time (make_plan): the plane with its halo (H+2p) x
// (W+2p) floats plus the filter slice must fit the device's sharedMemPerBlockOptin;
// make_plan then raises the kernel's cudaFuncAttributeMaxDynamicSharedMemorySize (outside
// timing) and checks with the occupancy API that a block can be resident. conv1's
// 227x227 plane is 206,116 bytes (+ 496 for the 11x11 slice): the study's GPU could not
// hold it; an H100/H200 block can opt in to 232,448 bytes (227 KiB), so on the H200 conv1
// takes the shared path too, at one 784-thread block per SM. Where it does not fit, the
// kernel reads the input from global memory for that layer and Plan::detail() says
// "input read from global memory (...)"; otherwise "input plane in shared memory (...)".
//
// Half (mk-sw-mt-si-c-half), precision class fp16: in, w and out are __half on the device;
// the harness converts float to half on the GPU after the copy in and back before the copy
// out (convert_ms, inside total_ms, not in kernel_ms). The kernels
// convert each element to float once, when it is staged into shared memory (the shared
// plane and filter are float, the same bytes as the fp32 variant); products and the
// per-channel sums are float. The workspace is HALF: each channel's partial is rounded
// once to half (~2^-12 relative of a partial of size ~|out|/sqrt(C)), halving the
// workspace bytes (the study: "denser packing"); kernel 2 sums the halves in float and
// rounds the output to half. No running sum is ever half, hence fp16 and not fp16acc.
//
// Workspace and batch size: C*N*M*E*F floats is 9.2 GB for conv2 and 13.0 GB for conv4 at
// N=128 (E*F padded to a multiple of 4: +0.2..1.8%), beyond device memory at N=2048.
// make_plan keeps it under ctx.workspace_limit: the study's pure form, G = 1 channel per
// block, whenever one image fits the limit, with the largest chunk of images that fits
// (at most ctx.max_chunk_N; run() loops over the batch in such chunks, kernel 1 then
// kernel 2 per chunk, reusing the workspace). Only when one image does not fit are the
// channels grouped, the study's own suggestion: each block sums G channels in registers
// (the fewest G that fits, Cg = ceil(C/G) groups, the last one possibly shorter), which
// divides the workspace by G. If even G = C (no workspace but one M x E x F plane per
// image) does not fit, the plan throws cs::Skip with the sizes. With the default limit
// (half the free memory of an H200) every AlexNet layer runs G = 1 at N=128; at N=2048
// it runs G = 1 in 1 (conv1) to 4 (conv4) chunks. G > 1 would be faster (G = C removes
// the workspace), but it would no longer be the study's experiment: grouping is a
// fallback, not a default.
// A chunk that fits in L2 would spare the HBM round trip only for conv1 (3.5 MB/image);
// conv2-5 need 66-100 MB per image at G = 1, more than the 60 MB L2, so chunks are simply
// as large as the limit allows.
//
// Prediction (N=128, H200, G = 1), first by bytes. The workspace is written by kernel 1 and
// read by kernel 2: 2*C*N*M*E*F*4 bytes against the direct kernel's input + weights + output
// (its minimum traffic), each moved at the HBM's bandwidth:
//   layer   workspace w+r   direct traffic   ratio
//   conv1       0.89 GB         0.23 GB        4x
//   conv2      18.4  GB         0.13 GB      140x
//   conv3      17.3  GB         0.06 GB      300x
//   conv4      26.0  GB         0.07 GB      370x
//   conv5      17.3  GB         0.06 GB      300x
// That is a floor, and not the bound: at G = 1 a block does very little work (conv3-5:
// 169 threads x 9 FMAs; conv2: 729 x 25) for a fixed cost per block (decoding its
// (n, m, c), staging, a barrier, 64-bit addressing, the store), and there are N*M*C blocks
// (12.6-18.9 M on conv3-5 at N=128). Kernel 1 is therefore bound by instruction issue,
// not by bytes or FMAs: ~250-350 instructions per thread for 9 FMAs on conv3-5 (ncu on
// the H200: SM issue near saturation, DRAM nearly idle), i.e. several times the workspace floor.
// This is why the block decode uses precomputed multiply-shift division (FastDiv) and the
// one-output kernels are limited to 32 registers (10 blocks/SM of 169 threads): both cut
// the per-block cost. mk adds a dependent global load and store per tap to that: each
// output's K/C taps become a chain of L1 (or L2) round trips, ~30-40 cycles each at best
// (a FMA is 4), hidden only by the other resident blocks. Expected: mk is the slowest of
// the family, ~1.5-2x mk-sw-mt on conv3-5 (9 taps per output per block, where the fixed
// per-block cost still dominates) and several times slower on conv1-2 (121 and 25 taps per
// channel, 4 outputs per thread on conv1: a chain of ~500 round trips per thread), much as
// the baseline (Mcpy) is to rla2m. The rest, on conv3-5: shared memory (sw-mt, si-c) adds
// staging and barriers that 9 uses per staged value cannot repay, so si-c is slower than
// mk-sw-mt there;
// -vec wins back most of it (unrolled rows, float4 staging); -half about -vec (fewer
// workspace bytes, same instructions); exp about -vec less kernel 2 and the workspace bytes.
// On conv2 (25 FMAs per thread) the ideas pay a little, -vec and exp lead. On conv1
// (C = 3: 4 outputs x 121 taps per thread, small workspace) kernel 1's loads decide: the
// coalesced mapping of si-c helps, its stride-4 shared reads conflict 4-way, which -vec's
// aligned float4 reads remove (about 2x over si-c). The study's ranking (Tables 6-7:
// -vec fastest on conv2-5, half on conv1) should hold only on conv1-2; and the family as
// a whole should lose to the single-kernel variants on the H200 at N=128, by about the
// per-block cost: the single kernels launch C times fewer blocks.
// (Earlier versions of mk kept their sums in registers; the H200 numbers measured then are
// mk-sw-mt's idea without the shared filter, not the study's Mk.)
// Measured: docs/findings.md, "The study's kernels".
//
// Resources (nvcc 13.0, sm_90, -Xptxas -v; no spills, no stack/local memory in any; all
// shared memory dynamic; __launch_bounds__(1024, 2) for one output per thread, at most
// 32 registers; (1024, 1), at most 64, for 2x2 and 4x4):
//   kernel 1 instantiation (kT = outputs/thread/dim bound)   regs kT=1 / 2 / 4
//   mk            (sums in global memory, global w and in,       30 / 48 / 64
//                  uncoalesced)
//   mk-sw-mt      (shared w, global in, uncoalesced)             32 / 48 / 62
//   mk-sw-mt-si-c (shared w, shared in, coalesced)               32 / 56 / 64
//     its global-input fallback                                  32 / 45 / 56
//   mk-sw-mt-si-c-half (shared in)                               30 / 55 / 64
//     its global-input fallback                                  32 / 39 / 55
//   kernel 2, float / half workspace                             30 / 30
//   dynamic shared memory per block: mk 0; sw-mt (R*S rounded up to 4)*4 (conv1 496 B);
//   si-c and half ((R*S rounded up to 4) + (H+2p)(W+2p))*4: conv1 206,612 B, conv2
//   3,956 B, conv3-5 948 B.
//
// This file holds the plans of the four rungs above (the kernels and the Plan: multi_kernel.cuh);
// the family's spec and supports() are host code, multi_kernel_family.cpp (declared in
// multi_kernel_rungs.hpp, with each variant's Design).
#include "multi_kernel.cuh"
#include "multi_kernel_rungs.hpp"

namespace cs::gpu::variants {

namespace mk = multi_kernel;
using MkSpec = mk::Spec<float, float, mk::kMk>;
using MkSwMtSpec = mk::Spec<float, float, mk::kMkSwMt>;
using MkSwMtSiCSpec = mk::Spec<float, float, mk::kMkSwMtSiC>;
using MkSwMtSiCHalfSpec = mk::Spec<__half, __half, mk::kMkSwMtSiC>;

std::unique_ptr<Plan> mk_plan(const Problem& p, const PlanContext& ctx) { return mk::make_plan<MkSpec>(p, ctx); }
std::unique_ptr<Plan> mk_sw_mt_plan(const Problem& p, const PlanContext& ctx) {
    return mk::make_plan<MkSwMtSpec>(p, ctx);
}
std::unique_ptr<Plan> mk_sw_mt_si_c_plan(const Problem& p, const PlanContext& ctx) {
    return mk::make_plan<MkSwMtSiCSpec>(p, ctx);
}
std::unique_ptr<Plan> mk_sw_mt_si_c_half_plan(const Problem& p, const PlanContext& ctx) {
    return mk::make_plan<MkSwMtSiCHalfSpec>(p, ctx);
}

}  // namespace cs::gpu::variants
