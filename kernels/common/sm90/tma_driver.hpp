// The driver's tensor-map encoders, host code: fetched once through
// cudaGetDriverEntryPointByVersion (no -lcuda). The TMA maps (hopper_tma.cuh, the wgmma
// Winograd rungs' winograd_wgmma.cuh) encode with them; a supports() that needs TMA reads
// `error` (fp32fast_family.cpp for the wgmma Winograd rungs).
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <mutex>
#include <string>

namespace cs::gpu::variants::hopper {

struct DriverFns {
    PFN_cuTensorMapEncodeIm2col_v12000 im2col = nullptr;
    PFN_cuTensorMapEncodeTiled_v12000 tiled = nullptr;
    std::string error;
};

inline const DriverFns& driver_fns() {
    static DriverFns fns;
    static std::once_flag once;
    std::call_once(once, [] {
        void* f = nullptr;
        cudaDriverEntryPointQueryResult q{};
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeIm2col", &f, 12000, cudaEnableDefault, &q) ==
                cudaSuccess &&
            q == cudaDriverEntryPointSuccess)
            fns.im2col = reinterpret_cast<PFN_cuTensorMapEncodeIm2col_v12000>(f);
        f = nullptr;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) ==
                cudaSuccess &&
            q == cudaDriverEntryPointSuccess)
            fns.tiled = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
        (void)cudaGetLastError();
        if (!fns.im2col || !fns.tiled) fns.error = "the driver does not provide cuTensorMapEncodeIm2col/Tiled";
    });
    return fns;
}

}  // namespace cs::gpu::variants::hopper
