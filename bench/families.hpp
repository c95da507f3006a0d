// The families the registry lists, in order: one spec function per family, defined with its
// rungs' supports() in the family's host .cpp file (the plans and kernels are its .cu files;
// family.hpp, "Host and kernels"). A new family is its spec function and one line in
// families() below.
#pragma once

#include "family.hpp"

#include <string>
#include <vector>

namespace cs::gpu::variants {

Family baseline_family();       // baseline_family.cpp
Family single_kernel_family();  // single_kernel_family.cpp
Family gemm_family();           // gemm_family.cpp
Family direct_family();         // direct_family.cpp
#ifdef CONVSTUDY_HAVE_CUDNN
Family cudnn_family();          // cudnn_family.cpp
Family cudnn_legacy_family();   // cudnn_legacy_family.cpp
#endif
Family cublas_family();         // cublas_family.cpp
Family hopper_family();         // kernels/hopper/family.cpp
Family fp32fast_family();       // fp32fast_family.cpp
Family multi_kernel_family();   // multi_kernel_family.cpp
Family auto_family();           // kernels/auto/auto_family.cpp: runs the others' rows

// In registry order (the order of `convstudy list`, the sweep and the plots' legends).
inline std::vector<Family> families() {
    return {
        baseline_family(), single_kernel_family(), gemm_family(), direct_family(),
#ifdef CONVSTUDY_HAVE_CUDNN
        cudnn_family(), cudnn_legacy_family(),
#endif
        cublas_family(), hopper_family(), fp32fast_family(), multi_kernel_family(), auto_family(),
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
