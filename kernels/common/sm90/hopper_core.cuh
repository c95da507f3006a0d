// The Hopper family: what its variants share — the implicit-GEMM view of a
// layer in NHWC, the PTX wrappers (wgmma, descriptors, cp.async, mbarrier, TMA, fences),
// the epilogue, the layout / space-to-depth transform kernels, and the Plan that runs
// transform + GEMM inside run(). The pieces: element and operand types in hopper_elems.cuh, the
// PTX wrappers in hopper_ptx.cuh, the direct epilogue and split-K's reduction in
// hopper_store.cuh, the transforms in hopper_transforms.cuh; the Plan here. Element type T: __half, __nv_bfloat16 (fp16 / bf16 rows) or
// float (tf32 rows: fp32 tensors, wgmma .tf32 k8). Shared-memory rows, swizzles, descriptors,
// TMA boxes and tile tables are in bytes (a k-slice row is 128 B or 64 B whatever T is), so
// the 4-byte type reuses everything; Elem<T> (output conversion) and OperandOf<T> (the tf32
// rounding that transforms apply to what they write) are the per-type parts. Each rung's file
// (wgmma_cpasync.cu, wgmma_tma.cu) holds its kernel and says what it studies (the persistent
// rungs: ws_kernel.cuh composed from pipeline.cuh, tile_scheduler.cuh, epilogue.cuh and
// schedule_pingpong.cuh, planned in wgmma_ws.cu; TMA host pieces in hopper_tma.cuh; tiles in tiles.hpp; the family spec in family.cpp; the wgmma wrappers are generated into wgmma_ops.cuh by
// tools/dev/hopper/gen_wgmma.py). The host side of the GEMM view (ConvGeom, the transforms'
// parameters, Setup / make_setup, supports_common) is plain C++ in geometry.hpp, which the
// rungs' supports() (supports.cpp) use in every build. Everything here is built
// for sm_90a only (CMake object library cs_gpu_hopper: -gencode=arch=compute_90a,code=sm_90a);
// device code is guarded by __CUDA_ARCH_FEAT_SM90_ALL, and supports() refuses other GPUs.
//
// ---- The GEMM (NHWC, "TN": both operands K-major) -----------------------------------------
//   rows    p in [0, P), P = N*E*F output pixels, p = (n*E + e)*F + f
//   columns m in [0, M) filters
//   k       in [0, K),  K = R*S*C, k = (r*S + s)*C + c: channels innermost, so that a K-run of
//           one filter tap (r,s) is a contiguous run of C channels in the NHWC input and in the
//           KRSC weights — the unit cp.async chunks (16 B = 8 channels) and TMA boxes address.
//   out[p][m] = sum_k  A[p][k] * B[m][k],  A[p][k] = in[n][e*st + r - pad][f*st + s - pad][c]
//   (zero outside the image), B[m][k] = w[m][r][s][c] (KRSC as it lies).
// The NHWC output is row-major P x M, exactly the GEMM's D; the NCHW output is written by the
// same epilogue with out[n][m][e][f] addressing (no permute kernel).
//
// ---- CTA tile --------------------------------------------------------------------------
// 128 rows (output pixels) x BN filters (BN = 96, 128, 192, 256: wgmma n), k-slices of BK
// (64 or 32 halves, 32 or 16 floats = one 128 B / 64 B swizzled shared-memory row). 256
// threads = 2 warpgroups; warpgroup g owns rows 64g..64g+63 and all BN columns: one
// wgmma.m64nBNk16 per 16 k (tf32: m64nBNk8 per 8 k; 32 bytes of K either way), its
// accumulator 64 x BN fp32 = BN/2 registers per thread.
//
// ---- Shared memory layout (what wgmma's descriptors and TMA's swizzle agree on) --------
// A stage: 128 rows x BK elements, row i at i*ROWB (ROWB = BK*sizeof(T) bytes), its 16-byte chunk j
// stored at chunk j ^ ((i*ROWB >> 7) & (ROWB/16 - 1)) — CUTLASS's Swizzle<3,4,3> (128 B) or
// Swizzle<2,4,3> (64 B) on byte offsets, which is what TMA's CU_TENSOR_MAP_SWIZZLE_128B/64B
// write and what a descriptor with layout type 1 (128B) / 2 (64B) reads. B stage: BN rows of
// the same shape. Every stage buffer starts at a multiple of 1024 B (the swizzle period), so
// the k-step kk inside a row is addressed by adding kk*sizeof(T) bytes (32 per wgmma) to the descriptor's start
// address, and warpgroup g's A rows by adding 64*g*ROWB. Descriptor: start >> 4 (bits 0-13),
// LBO (unused for swizzled K-major, 1), SBO = 8 rows * ROWB (bits 32-45), layout (62-63).
//
// ---- Accumulator fragment (wgmma m64nN, fp32) -------------------------------------------
// thread t of the warpgroup (warp w = t/32, lane l): d[4*j + 2*i + h] is row 16*w + l/4 + 8*i,
// column 8*j + 2*(l%4) + h, for j < N/8, i, h in {0,1}.
#pragma once

#include "buffers.hpp"
#include "conv_shape.hpp"
#include "cuda_check.hpp"
#include "error.hpp"
#include "geometry.hpp"
#include "hopper_elems.cuh"
#include "hopper_ptx.cuh"
#include "hopper_store.cuh"
#include "hopper_transforms.cuh"
#include "mbarrier.cuh"
#include "range_scale.hpp"
#include "s2d_vec.cuh"
#include "space_to_depth.hpp"
#include "split_mutation.hpp"
#include "tf32_round.cuh"
#include "variant.hpp"
#include "wgmma_ops.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace cs::gpu::variants::hopper {

constexpr int kThreads = 256;  // 2 warpgroups (kBM, the rows per CTA: geometry.hpp)

// ---- the Plan: transforms (if any) + the rung's GEMM, all inside run() --------------------
// Gemm: a rung's launcher with
//   void launch(const T* in, const T* w, T* out, const ConvGeom& g, bool nchw_out, cudaStream_t);
//   std::string detail() const;
//   std::string config() const;           (the axis values it runs with, for the CSV)
//   std::size_t workspace_bytes() const;  (its own device memory: rung 3's split-K partials)
// Whether a GEMM policy reads the raw input itself (raw_input(): the halo rung's s2d=loader),
// so that the plan runs no input transform and keeps no workspace for it.
template <class G, class = void>
struct HasRawInput : std::false_type {};
template <class G>
struct HasRawInput<G, std::void_t<decltype(std::declval<const G&>().raw_input())>> : std::true_type {};
template <class G>
inline bool reads_raw_input(const G& g) {
    if constexpr (HasRawInput<G>::value)
        return g.raw_input();
    else
        return false;
}
// Whether the plan runs the input transform into its workspace: the setup asks for one and the
// GEMM does not read the raw input itself.
template <class G>
inline bool transforms_input(const Setup& u, const G& g) {
    return u.tin && !reads_raw_input(g);
}
// Whether a GEMM policy can be launched as the input transform's programmatic dependent
// (after_transform: set where the transform runs; dependent_launch(): whether it then is —
// the persistent kernel's producer waits for the transform's writes before its first load,
// ws_kernel.cuh). The cp.async and TMA rungs' kernels have no such wait.
template <class G, class = void>
struct HasDependentLaunch : std::false_type {};
template <class G>
struct HasDependentLaunch<G, std::void_t<decltype(std::declval<const G&>().dependent_launch())>> : std::true_type {};

// Whether a GEMM policy applies the chain's bias and ReLU in its epilogue (members bias and
// relu, set before each launch: the persistent rungs and the halo mainloop; OutOps in
// hopper_store.cuh). The cp.async and TMA rungs' kernels store the plain convolution.
template <class G, class = void>
struct HasPostOps : std::false_type {};
template <class G>
struct HasPostOps<G, std::void_t<decltype(std::declval<G&>().bias = nullptr, std::declval<G&>().relu = true)>>
    : std::true_type {};

// The transformed input lives in a workspace sized for `chunk` images (all of the largest call
// when the workspace limit allows, else run() loops over chunks of images).
// T: the GEMM's operand type; TIO: the problem's (input, weights, output; T, or float for the
// 3xFP16 split). InOp / WOp: what the transforms write (OperandOf<T>, or Split3 / Split3Half;
// Setup::parts must be their kParts).
template <class T, class Gemm, class InOp = OperandOf<T>, class WOp = OperandOf<T>, class TIO = T>
class HopperPlan final : public Plan {
public:
    HopperPlan(Setup u, Gemm gemm, std::int64_t chunk, Buffer ws_in, Buffer ws_w, SplitMutation mut)
        : u_(std::move(u)), gemm_(std::move(gemm)), chunk_(chunk), ws_in_(std::move(ws_in)), ws_w_(std::move(ws_w)) {
        (void)mut;  // the split variants' test-only mutation (PlanContext::split_mutation)
        if constexpr (InOp::kScaled) {
            // The split's scales (range_scale.hpp): computed each run, applied by the transforms,
            // undone by the GEMM's epilogue (WsGemm::out_mul).
            mut_ = mut;
            const SplitKeep keep = split_keep(mut_);
            scale_ = RangeScaleBuffer(RangeTargets{InOp::kInLog2, InOp::kWLog2, std::int64_t(u_.s.C) * u_.s.R * u_.s.S},
                                      keep.lo_in, keep.lo_w_half);
            gemm_.out_mul = scale_.out_mul();
        }
        if constexpr (HasDependentLaunch<Gemm>::value) gemm_.after_transform = transforms_input(u_, gemm_);
    }

    void run(const DeviceIO& io, cudaStream_t stream) override {
        if constexpr (HasPostOps<Gemm>::value) {
            gemm_.bias = io.bias;
            gemm_.relu = io.relu;
        } else if (io.bias || io.relu) {
            throw cs::Error("hopper: this rung's epilogue stores the plain convolution (no fused bias or ReLU)");
        }
        // Dependent only where the GEMM is the first kernel: no weight transform in this run either.
        if constexpr (HasDependentLaunch<Gemm>::value)
            gemm_.chain_dependent = io.dependent && launches_dependent() && (!u_.tw || holds(io.w));
        const TIO* in = static_cast<const TIO*>(io.in);
        const TIO* w = static_cast<const TIO*>(io.w);
        TIO* out = static_cast<TIO*>(io.out);
        const bool nchw_out = u_.src_nchw;
        const RangeScale* rs = nullptr;
        if constexpr (InOp::kScaled) {
            static_assert(std::is_same_v<TIO, float>, "the split variants read fp32 tensors");
            scale_.compute(in, io.N * u_.src_img, w, std::int64_t(u_.s.M) * u_.s.C * u_.s.R * u_.s.S, stream);
            rs = scale_.device();
        }
        if constexpr (std::is_same_v<T, TIO>) {
            if (!u_.tw && !u_.tin) {
                gemm_.launch(in, w, out, geom_for(u_, io.N), nchw_out, stream);
                return;
            }
        }
        // A plan whose operand type differs from its problem's always transforms both.
        const T* wop = nullptr;
        if (u_.tw) {
            if (!holds(w)) {
                launch_prep_weights<TIO, WOp, T>(u_, w, ws_w_.as<T>(), stream, rs);
                held_w_ = nullptr;  // the copy now holds these weights, not the held ones
            }
            wop = ws_w_.as<T>();
        } else if constexpr (std::is_same_v<T, TIO>) {
            wop = w;
        }
        if (!transforms_input(u_, gemm_)) {  // NHWC read in place, or the GEMM's loader transforms it
            if constexpr (std::is_same_v<T, TIO>) gemm_.launch(in, wop, out, geom_for(u_, io.N), nchw_out, stream);
            return;
        }
        for (std::int64_t first = 0; first < io.N; first += chunk_) {
            const std::int64_t cnt = std::min(chunk_, io.N - first);
            launch_prep_input<TIO, InOp, T>(u_, in + first * u_.src_img, ws_in_.as<T>(), cnt, stream, rs);
            gemm_.launch(ws_in_.as<T>(), wop, out + first * u_.out_img, geom_for(u_, cnt), nchw_out, stream);
        }
    }
    bool fuses_post_ops() const override { return HasPostOps<Gemm>::value; }
    // The weights' transform once, here, for every later run given the same weights (the
    // split variants' transforms scale by each run's data: they transform in every run).
    bool hold_weights(const void* w, cudaStream_t stream) override {
        if constexpr (InOp::kScaled) {
            return false;
        } else {
            if (!u_.tw || !w) return false;
            launch_prep_weights<TIO, WOp, T>(u_, static_cast<const TIO*>(w), ws_w_.as<T>(), stream, nullptr);
            held_w_ = w;
            return true;
        }
    }
    // The GEMM is the first kernel (no transform before it) and can wait for the work before it.
    bool launches_dependent() const override {
        if constexpr (HasDependentLaunch<Gemm>::value && std::is_same_v<T, TIO> && !InOp::kScaled)
            return (!u_.tw || held_w_) && !transforms_input(u_, gemm_);
        return false;
    }
    std::size_t workspace_bytes() const override {
        return ws_in_.bytes() + ws_w_.bytes() + gemm_.workspace_bytes();
    }
    std::string config() const override { return gemm_.config(); }
    std::optional<std::string> run_error() const override {
        if constexpr (InOp::kScaled)
            return scale_.error(InOp::kInLog2 == 0 ? "the 3xTF32 split" : "the 3xFP16 split");
        return std::nullopt;
    }
    std::string detail() const override {
        const bool raw = reads_raw_input(gemm_);
        std::string d = gemm_.detail() + "; " + u_.what(raw);
        if constexpr (InOp::kScaled) d += "; " + scale_.describe() + split_mutation_note(mut_);
        if (transforms_input(u_, gemm_)) {
            d += ", workspace " + mib(double(workspace_bytes())) + " (" + std::to_string(chunk_) + " image(s) per chunk)";
            if constexpr (HasDependentLaunch<Gemm>::value)
                if (gemm_.dependent_launch()) d += "; the GEMM launched as the input transform's programmatic dependent";
        }
        return d;
    }

private:
    // Whether run() given weights w reads the copy hold_weights() made of them.
    bool holds(const void* w) const { return held_w_ && w == held_w_; }

    Setup u_;
    Gemm gemm_;
    const void* held_w_ = nullptr;  // hold_weights(): the weights whose transform ws_w_ holds
    std::int64_t chunk_;
    Buffer ws_in_, ws_w_;
    RangeScaleBuffer scale_;  // the split variants only
    SplitMutation mut_ = SplitMutation::none;
};

// Builds the workspace and the plan; throws Skip when one transformed image does not fit.
template <class T, class Gemm, class InOp = OperandOf<T>, class WOp = OperandOf<T>, class TIO = T>
inline std::unique_ptr<Plan> make_hopper_plan(const Problem& p, const PlanContext& ctx, Setup u, Gemm gemm) {
    static_assert(InOp::kParts == WOp::kParts, "input and weights split into the same channel blocks");
    if (u.parts != InOp::kParts) throw cs::Error("hopper: the setup's channel blocks do not match the transforms");
    if (!std::is_same_v<T, TIO> && !(u.tin && u.tw))
        throw cs::Error("hopper: an operand type other than the problem's needs both transforms");
    const std::int64_t max_n = std::max<std::int64_t>(1, ctx.max_chunk_N);
    std::int64_t chunk = max_n;
    Buffer ws_in, ws_w;
    if (transforms_input(u, gemm)) {
        const std::size_t per_img = std::size_t(u.ws_img) * sizeof(T);
        const std::size_t wbytes = std::size_t(u.w_elems) * sizeof(T);
        const std::size_t limit = ctx.workspace_limit > wbytes ? ctx.workspace_limit - wbytes : 0;
        if (per_img > limit)
            throw Skip("the transformed image (" + mib(double(per_img)) + ") exceeds the workspace limit " +
                       mib(double(ctx.workspace_limit)));
        chunk = std::max<std::int64_t>(1, std::min<std::int64_t>(max_n, std::int64_t(limit / per_img)));
        ws_in = Buffer(MemKind::device, std::size_t(chunk) * per_img);
    }
    if (u.tw) ws_w = Buffer(MemKind::device, std::size_t(u.w_elems) * sizeof(T));
    (void)p;
    return std::make_unique<HopperPlan<T, Gemm, InOp, WOp, TIO>>(std::move(u), std::move(gemm), chunk,
                                                                  std::move(ws_in), std::move(ws_w), ctx.split_mutation);
}

}  // namespace cs::gpu::variants::hopper
