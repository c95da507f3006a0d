// Test-only split mutations (split_mutation.hpp).
#include "split_mutation.hpp"

namespace cs::gpu {

SplitKeep split_keep(SplitMutation m) {
    SplitKeep k;
    if (m == SplitMutation::zero_input_lo) k.lo_in = 0.0f;
    if (m == SplitMutation::drop_product_half_k) k.lo_w_half = 0.0f;
    return k;
}

std::string split_mutation_note(SplitMutation m) {
    switch (m) {
        case SplitMutation::none: return "";
        case SplitMutation::zero_input_lo: return "; TEST MUTATION: input low parts zeroed";
        case SplitMutation::drop_product_half_k:
            return "; TEST MUTATION: weights' low parts zeroed over the first half of the channels";
    }
    return "";
}

}  // namespace cs::gpu
