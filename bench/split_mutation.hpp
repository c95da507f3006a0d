// Test-only: mutated splits for the fp32-class split variants (hopper-ws-3xfp16, hopper-ws-3xtf32,
// the Winograd 3xFP16 rungs, split-tf32), so that the GPU tests can prove the check tells a
// two-product split from the three-product one (tests/gpu/test_split_range_gpu.cpp, tag
// [split-mutation]). Not a user-visible axis or option: nothing in the CLI sets it. A test sets
// it in RunOptions::split_mutation, which reaches the plans through PlanContext; a split
// variant's plan applies it and names it in its detail; every other variant ignores it.
//   zero_input_lo        the low parts of the input are zeroed: two products (hi*hi + lo*hi...)
//                        of the three, the lo*hi product gone
//   drop_product_half_k  the weights' low parts are zeroed for the first half of the channels
//                        (half of K): the hi*lo product dropped over half of the reduction
#pragma once

#include <string>

namespace cs::gpu {

enum class SplitMutation { none, zero_input_lo, drop_product_half_k };

// The factors a split applies to its low parts: lo_in to every input low part, lo_w_half to
// the weights' low parts of the first half of the channels (1: kept, 0: zeroed).
struct SplitKeep {
    float lo_in = 1.0f;
    float lo_w_half = 1.0f;
};
SplitKeep split_keep(SplitMutation m);
// "" for none, else "; TEST MUTATION: ..." for a plan's detail.
std::string split_mutation_note(SplitMutation m);

}  // namespace cs::gpu
