// The clusters of one-SM CTAs that run at once, as the plan and the cost model count them
// (TileSched::cluster_fit: split-K across clusters chooses and is priced by it), against the
// device's own answer, cudaOccupancyMaxActiveClusters, for a kernel that takes a whole SM's shared
// memory as the persistent rungs do.
#include "catch.hpp"
#include "gpu_test_util.hpp"
#include "tile_scheduler.cuh"

#include <cuda_runtime.h>

namespace {

using cs::gpu::variants::hopper::TileSched;

__global__ void whole_sm_kernel() {}

}  // namespace

TEST_CASE("on the GPU, TileSched::cluster_fit is the device's count of clusters that fit at once", "[gpu][auto][model]") {
    if (cs::test::device().prop().major < 9) {
        WARN("thread block clusters need sm_90: not checked on this GPU");
        return;
    }
    int dev = 0, sms = 0, smem = 0;
    REQUIRE(cudaGetDevice(&dev) == cudaSuccess);
    REQUIRE(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess);
    REQUIRE(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) == cudaSuccess);
    REQUIRE(cudaFuncSetAttribute(whole_sm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) == cudaSuccess);
    REQUIRE(cudaFuncSetAttribute(whole_sm_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) == cudaSuccess);
    for (int parts : {2, TileSched::kPortableClusterParts, TileSched::kMaxClusterParts}) {
        cudaLaunchAttribute attr{};
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = unsigned(parts);
        attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
        cudaLaunchConfig_t cfg{};
        cfg.gridDim = dim3(unsigned(sms / parts * parts));
        cfg.blockDim = dim3(128);
        cfg.dynamicSmemBytes = std::size_t(smem);
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        int clusters = 0;
        REQUIRE(cudaOccupancyMaxActiveClusters(&clusters, whole_sm_kernel, &cfg) == cudaSuccess);
        INFO(sms << " SMs, clusters of " << parts << ": the device fits " << clusters << ", cluster_fit says "
                 << TileSched::cluster_fit(sms, parts));
        CHECK(clusters == TileSched::cluster_fit(sms, parts));
    }
}
