// The families the registry lists, in order: one spec function per family, defined in the
// family's own files. A new family is its spec function and one line in families() below.
#pragma once

#include "family.hpp"

#include <string>
#include <vector>

namespace cs::gpu::variants {

Family baseline_family();       // baseline.cu
Family single_kernel_family();  // single_kernel.cu (with half_baseline.cu)
Family gemm_family();           // gemm_family.cpp
Family direct_family();         // direct_family.cpp
#ifdef CONVSTUDY_HAVE_CUDNN
Family cudnn_family();          // cudnn_graph.cu
Family cudnn_legacy_family();   // cudnn.cu
#endif
Family cublas_family();         // cublas_im2col.cu
Family hopper_family();         // hopper/family.cu
Family fp32fast_family();       // fp32fast_family.cpp
Family multi_kernel_family();   // multi_kernel.cu (with multi_kernel_vec.cu)

// In registry order (the order of `convstudy list`, the sweep and the plots' legends).
inline std::vector<Family> families() {
    return {
        baseline_family(), single_kernel_family(), gemm_family(), direct_family(),
#ifdef CONVSTUDY_HAVE_CUDNN
        cudnn_family(), cudnn_legacy_family(),
#endif
        cublas_family(), hopper_family(), fp32fast_family(), multi_kernel_family(),
    };
}

// The rows of the families this build leaves out, for the help text and the tests: the cuDNN
// families' files are compiled only where CMake found cuDNN (CONVSTUDY_HAVE_CUDNN).
inline std::vector<std::string> rows_not_built() {
#ifdef CONVSTUDY_HAVE_CUDNN
    return {};
#else
    return {"cudnn-fp32",        "cudnn-tf32",        "cudnn-fp16",       "cudnn-bf16",
            "cudnn-legacy-fp32", "cudnn-legacy-tf32", "cudnn-legacy-fp16", "cudnn-fp32-s2d",
            "cudnn-tf32-s2d",    "cudnn-fp16-s2d",    "cudnn-bf16-s2d"};
#endif
}
inline const char* why_not_built() { return "cuDNN was not found when it was configured"; }

}  // namespace cs::gpu::variants
