// Host side of ws_kernel.cuh: from a runtime (tile, schedule, epilogue) to the kernel
// instantiation, its shared memory and its launch. launch_ws<T, TO, kDown> is explicitly
// instantiated once per operand type in ws_inst_*.cu (the kernels compile in parallel).
#pragma once

#include "cuda_check.hpp"
#include "ws_kernel.cuh"

namespace cs::gpu::variants::hopper {

enum class Schedule { cooperative, pingpong };
enum class Epilogue { direct, tma_store };

// Whether the persistent kernel instantiates tile I for this schedule (1 CTA per SM; a
// ping-pong warpgroup holds a whole 128 x BN tile: BN <= 128, 128 pixels, MMAs over the
// whole slice).
inline constexpr bool ws_tile_ok_rt(int i, Schedule s) {
    return kTiles[i].minb == 1 &&
           (s == Schedule::cooperative || (kTiles[i].bn <= 128 && kTiles[i].bm == kBM && !kTiles[i].kb));
}
template <int I>
constexpr bool ws_tile_ok(Schedule s) {
    return ws_tile_ok_rt(I, s);
}

// Dynamic shared memory of the persistent kernel for a tile and an epilogue (bytes).
inline int ws_smem_bytes(int tile, Epilogue e) {
    return ws_smem_total(kTiles[tile], e == Epilogue::tma_store ? EpiTmaStore::kSmemBytes : 0);
}

struct WsLaunch {
    const CUtensorMap* a;
    const CUtensorMap* b;
    const CUtensorMap* o;
    int tile;
    Schedule schedule;
    Epilogue epilogue;
    bool prepare_only;  // set the kernel's shared-memory attribute, launch nothing
    int cluster = 1;    // CTAs per cluster: 1 or 2
    bool mc_a = false;  // cluster 2 along the filters (the A tile multicast), else along the pixels
    int* max_ctas = nullptr;  // prepare_only with a cluster: the CTAs that fit at once in clusters
    int split_parts = 0;      // prepare_only, cluster split-K: its clusters' size (max_ctas for it)
    bool pdl = false;         // launched as the programmatic dependent of the kernel before it (the input transform)
};

template <class T, int I, bool kPP, class Epi, class TO, int kDown, int kCL = 1, bool kMcA = false, int kCut = kCutNone,
          bool kClK = false>
void launch_one(const WsLaunch& l, const WsArgs<TO>& args, cudaStream_t stream) {
    auto* k = ws_kernel<T, I, kPP, Epi, TO, kDown, kCL, kMcA, kCut, kClK>;
    constexpr int smem = WsSmem<T, I, Epi>::kTotal;
    // A launch of `grid` CTAs in clusters of kCL, or of the split's parts (kClK), and/or as
    // the programmatic dependent of the kernel before it (l.pdl): cudaLaunchKernelEx's form.
    constexpr bool kCluster = kCL > 1 || kClK;
    cudaLaunchAttribute attr[2]{};
    attr[0].id = cudaLaunchAttributeClusterDimension;
    // cluster split-K: clusters of the parts of a tile (TileSched::ksplit), else kCL
    attr[0].val.clusterDim.x = unsigned(kClK ? args.sched.ksplit : kCL), attr[0].val.clusterDim.y = 1,
    attr[0].val.clusterDim.z = 1;
    attr[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[1].val.programmaticStreamSerializationAllowed = 1;
    auto launch_config = [&](int grid, bool pdl) {
        cudaLaunchConfig_t cfg{};
        cfg.gridDim = dim3(unsigned(grid));
        cfg.blockDim = dim3(kWsThreads);
        cfg.dynamicSmemBytes = smem;
        cfg.stream = stream;
        cfg.attrs = kCluster ? attr : attr + 1;
        cfg.numAttrs = (kCluster ? 1 : 0) + (pdl ? 1 : 0);
        return cfg;
    };
    if (l.prepare_only) {
        CS_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        // cluster split-K in 16 parts (split-k-cluster16): a non-portable cluster size
        if constexpr (kClK) CS_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        // The CTAs that fit at once in clusters of this kernel's size (kCL, or the split's parts)
        const int cl = kClK ? l.split_parts : kCL;
        if (cl > 1 && l.max_ctas) {
            int dev = 0, sms = 0, clusters = 0;
            CS_CUDA_CHECK(cudaGetDevice(&dev));
            CS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
            attr[0].val.clusterDim.x = unsigned(cl);
            const cudaLaunchConfig_t cfg = launch_config(sms / cl * cl, false);
            CS_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, k, &cfg));
            *l.max_ctas = clusters * cl;
        }
        return;
    }
    // Each scheduler that cuts tiles has a kernel of its own, whose walk is that scheduler's
    // alone (it would skip or repeat k-slices of another's): the dispatch below picks kCut.
    if (kCut != args.sched.cut_kind())
        throw cs::Error("hopper: a persistent kernel launched for another tile scheduler than its own");
    if (kClK != (args.sched.mode == TileSched::kSplitKCluster))
        throw cs::Error("hopper: the cluster split-K kernel and scheduler must go together");
    if (!kCluster && !l.pdl) {
        k<<<unsigned(args.sched.grid), kWsThreads, smem, stream>>>(*l.a, *l.b, *l.o, args);
    } else {
        const cudaLaunchConfig_t cfg = launch_config(args.sched.grid, l.pdl);
        CS_CUDA_CHECK(cudaLaunchKernelEx(&cfg, k, *l.a, *l.b, *l.o, args));
    }
    CS_CUDA_CHECK_LAUNCH();
}

// The epilogue is the one runtime choice left once the rest is fixed.
template <class T, int I, bool kPP, class TO, int kDown, int kCL = 1, bool kMcA = false, int kCut = kCutNone>
void launch_epi(const WsLaunch& l, const WsArgs<TO>& args, cudaStream_t stream) {
    if (l.epilogue == Epilogue::direct)
        launch_one<T, I, kPP, EpiDirect, TO, kDown, kCL, kMcA, kCut>(l, args, stream);
    else
        launch_one<T, I, kPP, EpiTmaStore, TO, kDown, kCL, kMcA, kCut>(l, args, stream);
}
// The kernels of one tile without a cluster of two, in either schedule. A tile scheduler that
// cuts tiles between CTAs (split-tail, stream-K, fused split-K) runs a kernel of its own
// (kCut), so the other schedulers' kernels carry none of the cut tiles' code and each cut walk
// is a loop per kind of unit (tile_scheduler.cuh). Fused and cluster split-K: cooperative only.
template <class T, int I, bool kPP, class TO, int kDown>
void launch_alone(const WsLaunch& l, const WsArgs<TO>& args, cudaStream_t stream) {
    if (l.prepare_only) {  // every kernel's shared-memory attribute: the plan's scheduler picks one
        launch_epi<T, I, kPP, TO, kDown, 1, false, kCutTail>(l, args, stream);
        launch_epi<T, I, kPP, TO, kDown, 1, false, kCutStreamK>(l, args, stream);
        launch_epi<T, I, kPP, TO, kDown>(l, args, stream);
        if constexpr (!kPP) {
            launch_epi<T, I, false, TO, kDown, 1, false, kCutFused>(l, args, stream);
            launch_one<T, I, false, EpiDirect, TO, kDown, 1, false, kCutNone, true>(l, args, stream);
        }
        return;
    }
    switch (args.sched.cut_kind()) {
    case kCutTail: return launch_epi<T, I, kPP, TO, kDown, 1, false, kCutTail>(l, args, stream);
    case kCutStreamK: return launch_epi<T, I, kPP, TO, kDown, 1, false, kCutStreamK>(l, args, stream);
    case kCutFused:  // cooperative only (the plan refuses it in ping-pong; launch_one would say so)
        if constexpr (!kPP) return launch_epi<T, I, false, TO, kDown, 1, false, kCutFused>(l, args, stream);
        break;
    default: break;
    }
    if constexpr (!kPP) {
        if (args.sched.mode == TileSched::kSplitKCluster)  // the parts' sum writes the output: direct
            return launch_one<T, I, false, EpiDirect, TO, kDown, 1, false, kCutNone, true>(l, args, stream);
    }
    launch_epi<T, I, kPP, TO, kDown>(l, args, stream);
}

template <class T, class TO, int kDown>
void launch_ws(const WsLaunch& l, const WsArgs<TO>& args, cudaStream_t stream) {
    with_tile(l.tile, [&](auto I) {
        constexpr int i = decltype(I)::value;
        if (l.schedule == Schedule::cooperative) {
            if constexpr (ws_tile_ok<i>(Schedule::cooperative)) {
                if constexpr (kTiles[i].bm != kBM)  // 64 / 256 pixels: no cluster of two (the plan refuses one)
                    launch_alone<T, i, false, TO, kDown>(l, args, stream);
                else if (l.cluster == 2 && l.mc_a)
                    launch_epi<T, i, false, TO, kDown, 2, true>(l, args, stream);
                else if (l.cluster == 2)
                    launch_epi<T, i, false, TO, kDown, 2>(l, args, stream);
                else
                    launch_alone<T, i, false, TO, kDown>(l, args, stream);
            }
        } else {
            if constexpr (ws_tile_ok<i>(Schedule::pingpong)) {
                if (l.cluster == 2 && l.mc_a)  // the A tile multicast to a pair of filter tiles
                    launch_epi<T, i, true, TO, kDown, 2, true>(l, args, stream);
                else if (l.cluster == 2)  // the B tile multicast to a pair of pixel rows
                    launch_epi<T, i, true, TO, kDown, 2>(l, args, stream);
                else
                    launch_alone<T, i, true, TO, kDown>(l, args, stream);
            }
        }
    });
}

extern template void launch_ws<__half, __half, 0>(const WsLaunch&, const WsArgs<__half>&, cudaStream_t);
extern template void launch_ws<__nv_bfloat16, __nv_bfloat16, 0>(const WsLaunch&, const WsArgs<__nv_bfloat16>&,
                                                                 cudaStream_t);
extern template void launch_ws<float, float, 0>(const WsLaunch&, const WsArgs<float>&, cudaStream_t);
extern template void launch_ws<__half, float, kLoLog2>(const WsLaunch&, const WsArgs<float>&, cudaStream_t);

}  // namespace cs::gpu::variants::hopper
