// The families the registry lists, in order: one spec function per family, defined in the
// family's own files. A new family is one line here and one in registry.cpp's families().
#pragma once

#include "family.hpp"

#include <vector>

namespace cs::gpu::variants {

#ifdef CONVSTUDY_HAVE_CUDNN
Family cudnn_s2d_family();  // cudnn_s2d.cu
#endif
Family hopper_family();  // hopper/family.cu

// In registry order; "legacy" stands for the rows registry.cpp still lists one by one.
inline std::vector<Family> families() {
    Family legacy;
    legacy.name = "legacy";
    return {legacy,
#ifdef CONVSTUDY_HAVE_CUDNN
            cudnn_s2d_family(),
#endif
            hopper_family()};
}

}  // namespace cs::gpu::variants
