// The families the registry lists, in order: one spec function per family, defined in the
// family's own files. A new family is one line here and one in registry.cpp's families().
#pragma once

#include "family.hpp"

#include <vector>

namespace cs::gpu::variants {

Family hopper_family();  // hopper/family.cu

// In registry order; "legacy" stands for the rows registry.cpp still lists one by one.
inline std::vector<Family> families() {
    Family legacy;
    legacy.name = "legacy";
    return {legacy, hopper_family()};
}

}  // namespace cs::gpu::variants
