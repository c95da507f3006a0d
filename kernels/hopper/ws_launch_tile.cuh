// The persistent kernels of one tile (ws_kernel.cuh) from the runtime choices that remain
// (schedule, cluster, tile scheduler, epilogue): launch_ws_tile, declared in ws_launch.cuh.
// Only the files CMake generates for the persistent kernels include it (one explicit
// instantiation per operand type and tile, CONVSTUDY_WS_PARTS files per type), so that no
// other file instantiates the kernels.
#pragma once

#include "ws_launch.cuh"

namespace cs::gpu::variants::hopper {

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

template <class T, class TO, int kDown, int I>
void launch_ws_tile(const WsLaunch& l, const WsArgs<TO>& args, cudaStream_t stream) {
    if (l.schedule == Schedule::cooperative) {
        if constexpr (ws_tile_ok<I>(Schedule::cooperative)) {
            if constexpr (kTiles[I].bm != kBM)  // 64 / 256 pixels: no cluster of two (the plan refuses one)
                launch_alone<T, I, false, TO, kDown>(l, args, stream);
            else if (l.cluster == 2 && l.mc_a)
                launch_epi<T, I, false, TO, kDown, 2, true>(l, args, stream);
            else if (l.cluster == 2)
                launch_epi<T, I, false, TO, kDown, 2>(l, args, stream);
            else
                launch_alone<T, I, false, TO, kDown>(l, args, stream);
        }
    } else {
        if constexpr (ws_tile_ok<I>(Schedule::pingpong)) {
            if (l.cluster == 2 && l.mc_a)  // the A tile multicast to a pair of filter tiles
                launch_epi<T, I, true, TO, kDown, 2, true>(l, args, stream);
            else if (l.cluster == 2)  // the B tile multicast to a pair of pixel rows
                launch_epi<T, I, true, TO, kDown, 2>(l, args, stream);
            else
                launch_alone<T, I, true, TO, kDown>(l, args, stream);
        }
    }
}

}  // namespace cs::gpu::variants::hopper
