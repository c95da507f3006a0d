// multi-kernel family — the shared machinery of multi_kernel.cu and multi_kernel_vec.cu:
// one templated partial-sum kernel, one templated reduction kernel, the workspace policy
// and the Plan that runs them. The variants differ only in the template flags, i.e. in
// what they study (see the table in multi_kernel.cu); everything else is this code, except
// the host code every build holds (multi_kernel_rungs.hpp): each variant's flags (Design),
// supports() and the helpers it shares with make_plan (multi_kernel_family.cpp).
//
// The kernels: multi_kernel_kernels.cuh. Here: the workspace policy and the Plan.
#pragma once

#include "multi_kernel_kernels.cuh"

namespace cs::gpu::variants::multi_kernel {

// ---------------------------------------------------------------------------------------
// Host side: the plan, compiled with the kernels.

// One variant: its element types (T in and w, Wt the workspace or, kAtomic, the output) and
// its Design (multi_kernel_rungs.hpp); the kernels are instantiated from the Design's flags.
template <class T_, class Wt_, const Design& kDesign>
struct Spec {
    using T = T_;
    using Wt = Wt_;
    static constexpr const Design& design = kDesign;
    static constexpr bool kSW = kDesign.sw, kSI = kDesign.si, kVec = kDesign.vec, kAtomic = kDesign.atomic,
                          kGlobalAcc = kDesign.global_acc;
    static constexpr PlaneMapping kMap = kDesign.map;
};

#ifdef __CUDACC__

template <class Sp>
struct Kernels {
    using T = typename Sp::T;
    using Wt = typename Sp::Wt;
    using K1 = void (*)(const T*, const T*, Wt*, MkArgs);
    using K2 = void (*)(const Wt*, T*, MkArgs);

    // The unrolled float4 rows are instantiated for square R = S in {3, 5, 11}; not for the global-
    // input fallback with 4x4 outputs per thread, where the unrolled global loads of 16
    // outputs spill registers (it takes the run-time-S kernel: same sums, same order).
    template <bool kSI, int kT>
    static K1 by_s(int R, int S) {
        if constexpr (Sp::kVec && (kSI || kT <= 2)) {
            if (R == S) switch (S) {
                case 3: return &mk_partial_kernel<T, Wt, Sp::kSW, kSI, true, Sp::kAtomic, false, Sp::kMap, kT, 3>;
                case 5: return &mk_partial_kernel<T, Wt, Sp::kSW, kSI, true, Sp::kAtomic, false, Sp::kMap, kT, 5>;
                case 11: return &mk_partial_kernel<T, Wt, Sp::kSW, kSI, true, Sp::kAtomic, false, Sp::kMap, kT, 11>;
                default: break;
            }
        }
        return &mk_partial_kernel<T, Wt, Sp::kSW, kSI, Sp::kVec, Sp::kAtomic, Sp::kGlobalAcc, Sp::kMap, kT, 0>;
    }
    template <bool kSI>
    static K1 pick(int t, int R, int S) {
        if (t <= 1) return by_s<kSI, 1>(R, S);
        if (t == 2) return by_s<kSI, 2>(R, S);
        return by_s<kSI, 4>(R, S);
    }
    static K2 reduce() { return &mk_reduce_kernel<Wt, T, Sp::kVec>; }
};

template <class Sp>
class MkPlan final : public Plan {
public:
    using T = typename Sp::T;
    using Wt = typename Sp::Wt;
    using K1 = typename Kernels<Sp>::K1;
    using K2 = typename Kernels<Sp>::K2;

    MkPlan(const MkArgs& a, K1 k1, dim3 block1, std::size_t smem1, K2 k2, int red_threads, std::int64_t chunk,
           Buffer ws, std::string detail)
        : a_(a), k1_(k1), block1_(block1), smem1_(smem1), k2_(k2), red_threads_(red_threads), chunk_(chunk),
          ws_(std::move(ws)), detail_(std::move(detail)) {}

    void run(const DeviceIO& io, cudaStream_t stream) override {
        const ConvShape& s = a_.s;
        const T* in = static_cast<const T*>(io.in);
        const T* w = static_cast<const T*>(io.w);
        T* out = static_cast<T*>(io.out);
        const std::int64_t in_img = std::int64_t(s.C) * s.H * s.W;
        const std::int64_t out_img = std::int64_t(s.M) * s.E * s.F;
        if constexpr (Sp::kAtomic)
            CS_CUDA_CHECK(cudaMemsetAsync(out, 0, std::size_t(io.N * out_img) * sizeof(T), stream));
        for (std::int64_t first = 0; first < io.N; first += chunk_) {
            const std::int64_t cnt = std::min(chunk_, io.N - first);
            const T* in_c = in + first * in_img;
            T* out_c = out + first * out_img;
            const dim3 grid1(unsigned(cnt * a_.Cg * s.M));
            if constexpr (Sp::kAtomic) {
                k1_<<<grid1, block1_, smem1_, stream>>>(in_c, w, out_c, a_);
                CS_CUDA_CHECK_LAUNCH();
            } else {
                Wt* ws = ws_.as<Wt>();
                k1_<<<grid1, block1_, smem1_, stream>>>(in_c, w, ws, a_);
                CS_CUDA_CHECK_LAUNCH();
                k2_<<<dim3(unsigned(cnt * s.M)), dim3(unsigned(red_threads_)), 0, stream>>>(ws, out_c, a_);
                CS_CUDA_CHECK_LAUNCH();
            }
        }
    }
    std::size_t workspace_bytes() const override { return ws_.bytes(); }
    std::string detail() const override { return detail_; }

private:
    MkArgs a_;
    K1 k1_;
    dim3 block1_;
    std::size_t smem1_;
    K2 k2_;
    int red_threads_;
    std::int64_t chunk_;
    Buffer ws_;
    std::string detail_;
};

// Builds the plan: tiling, the shared-input decision (from the device's opt-in limit, at
// run time), the group size G and chunk of images that keep the workspace under
// ctx.workspace_limit, the workspace itself. Throws cs::Skip when even one image with
// all C channels summed in one block (G = C) cannot fit.
template <class Sp>
std::unique_ptr<Plan> make_plan(const Problem& p, const PlanContext& ctx) {
    using Wt = typename Sp::Wt;
    const ConvShape s = conv_shape(p.layer);
    const PlaneTiling tl = plane_tiling(s.E, s.F, ctx.prop.maxThreadsPerBlock);
    const std::int64_t EF = std::int64_t(s.E) * s.F;

    MkArgs a{};
    a.s = s;
    a.t = tl.t;
    a.EFp = int((EF + 3) / 4 * 4);
    a.Sw = filter_row_stride(Sp::kVec, s);
    a.w_floats = Sp::kSW ? round_up4(s.R * a.Sw) : 0;
    a.Hp = s.H + 2 * s.pad;
    a.Wp = s.W + 2 * s.pad;
    a.by_M = FastDiv::make(unsigned(s.M));
    a.by_W = FastDiv::make(unsigned(s.W));
    if (Sp::kVec && a.Sw != s.S && s.stride % 4 == 0) {
        // float4 reads of kSp = round_up(S, 4) columns from column f*stride: the row stride
        // must cover the last such read and keep rows 16-byte aligned.
        a.Wp = round_up4(std::max(a.Wp, (s.F - 1) * s.stride + a.Sw));
    }

    a.by_Wp = FastDiv::make(unsigned(a.Wp));

    // --- shared input plane: decided from this device's opt-in limit ---
    typename Kernels<Sp>::K1 k1 = nullptr;
    std::size_t smem = std::size_t(a.w_floats) * 4;
    std::string input_note;
    if constexpr (Sp::kSI) {
        const std::size_t need = (std::size_t(a.w_floats) + std::size_t(a.Hp) * std::size_t(a.Wp)) * 4;
        const std::size_t optin = ctx.prop.sharedMemPerBlockOptin;
        if (need <= optin) {
            auto cand = Kernels<Sp>::template pick<true>(tl.t, s.R, s.S);
            bool ok = true;
            if (need > ctx.prop.sharedMemPerBlock)
                ok = cudaFuncSetAttribute(cand, cudaFuncAttributeMaxDynamicSharedMemorySize, int(need)) == cudaSuccess;
            int blocks = 0;
            if (ok)
                ok = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, cand, tl.threads(), need) == cudaSuccess &&
                     blocks >= 1;
            if (ok) {
                k1 = cand;
                smem = need;
                input_note = "input plane in shared memory (" + kib(double(need)) + " per block of the device's " +
                             kib(double(optin)) + " opt-in, " + std::to_string(blocks) + " block(s)/SM)";
            } else {
                (void)cudaGetLastError();
                input_note = "input read from global memory (the device refused " + kib(double(need)) +
                             " of shared memory per block)";
            }
        } else {
            input_note = "input read from global memory (the plane needs " + kib(double(need)) +
                         " of shared memory, more than the device's opt-in " + kib(double(optin)) + ")";
        }
    }
    if (!k1) {
        k1 = Kernels<Sp>::template pick<false>(tl.t, s.R, s.S);
        if (smem > ctx.prop.sharedMemPerBlock)
            CS_CUDA_CHECK(cudaFuncSetAttribute(k1, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
        if (input_note.empty()) input_note = "input read from global memory";
    }

    // --- channel groups and chunks of images ---
    const std::int64_t gx = ctx.prop.maxGridSize[0];
    const std::int64_t max_n = std::max<std::int64_t>(1, ctx.max_chunk_N);
    std::int64_t chunk = 1;
    Buffer ws;
    std::string mem_note;
    if constexpr (Sp::kAtomic) {
        a.G = 1;
        a.Cg = s.C;
        a.by_Cg = FastDiv::make(unsigned(a.Cg));
        chunk = std::max<std::int64_t>(1, std::min(max_n, gx / (std::int64_t(s.C) * s.M)));
        mem_note = "no workspace: partials atomicAdd-ed into the zeroed output, chunk " + std::to_string(chunk) +
                   " images/launch";
    } else {
        const std::size_t group_plane = std::size_t(a.EFp) * sizeof(Wt) * std::size_t(s.M);  // one group, one image
        const std::size_t limit = ctx.workspace_limit;
        std::int64_t cg_max = std::int64_t(limit / group_plane);
        cg_max = std::min<std::int64_t>(cg_max, gx / s.M);
        if (cg_max < 1)
            throw Skip("multi-kernel workspace: one image with all " + std::to_string(s.C) +
                       " channels summed in one block still needs M*E*F = " + kib(double(group_plane)) +
                       ", more than the workspace limit " + kib(double(limit)));
        // The study's form, G = 1, whenever one image fits; else the fewest channels per
        // block that fit: G = ceil(C / cg_max), then Cg = ceil(C / G) <= cg_max groups.
        const int G = cg_max >= s.C ? 1 : int((s.C + cg_max - 1) / cg_max);
        a.G = G;
        a.Cg = (s.C + G - 1) / G;
        a.by_Cg = FastDiv::make(unsigned(a.Cg));
        const std::size_t per_image = std::size_t(a.Cg) * group_plane;
        chunk = std::min<std::int64_t>(max_n, std::int64_t(limit / per_image));
        chunk = std::min<std::int64_t>(chunk, gx / (std::int64_t(a.Cg) * s.M));
        chunk = std::max<std::int64_t>(1, chunk);
        ws = Buffer(MemKind::device, std::size_t(chunk) * per_image);
        CS_CUDA_CHECK(cudaMemset(ws.get(), 0, ws.bytes()));  // the pad lanes stay zero
        mem_note = "workspace " + kib(double(ws.bytes())) + " (" + (sizeof(Wt) == 2 ? "half" : "float") +
                   ", plane stride " + std::to_string(a.EFp) + ") for chunks of " + std::to_string(chunk) +
                   " images, " + std::to_string(G) + " channel(s) per group, " + std::to_string(a.Cg) +
                   " groups/image";
    }

    const int red_items = Sp::kVec ? a.EFp / 4 : int(EF);
    const int red_threads = std::min(1024, std::max(32, (red_items + 31) / 32 * 32));
    const dim3 block1(unsigned(tl.bx), unsigned(tl.by));
    std::string detail = "kernel 1: block " + std::to_string(tl.bx) + "x" + std::to_string(tl.by) + ", " +
                         std::to_string(tl.t) + "x" + std::to_string(tl.t) + " outputs/thread " +
                         (Sp::kMap == PlaneMapping::coalesced ? "coalesced" : "uncoalesced") + ", grid chunk*" +
                         std::to_string(a.Cg) + "*" + std::to_string(s.M) + " on x; " + mem_note;
    if (Sp::kSI) detail += "; " + input_note;
    if (!Sp::kAtomic) detail += "; kernel 2: " + std::to_string(red_threads) + " threads per (n, m), fixed order";
    return std::make_unique<MkPlan<Sp>>(a, k1, block1, smem, Kernels<Sp>::reduce(), red_threads, chunk, std::move(ws),
                                        std::move(detail));
}

#endif  // __CUDACC__

}  // namespace cs::gpu::variants::multi_kernel
