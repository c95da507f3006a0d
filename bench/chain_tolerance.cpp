#include "chain_tolerance.hpp"

#include <cmath>

namespace cs::gpu {

// The numbers and their derivation: chain_tolerance.hpp.
double chain_threshold(Precision p) {
    switch (p) {
        case Precision::fp32: return 1e-4;
        case Precision::tf32: return 1e-2;
        case Precision::fp16: return 5e-3;
        case Precision::bf16: return 2e-2;
        case Precision::fp16acc: return 5e-2;
    }
    return 0;
}

const char* chain_threshold_reason(Precision p) {
    switch (p) {
        case Precision::fp32:
            return "emulated chain <= 2.1e-6 of max|out| per layer; never tighter than the per-layer 1e-4";
        case Precision::tf32:
            return "emulated chain 6.4e-4 (operands rounded to nearest), 3.3e-3 (truncated, drifting through the "
                   "layers); 2x rounded up to 1e-2";
        case Precision::fp16:
            return "emulated chain <= 6.8e-4 (half operands, outputs and bias); never tighter than the per-layer 5e-3";
        case Precision::bf16:
            return "emulated chain 5.7e-3 at conv5 (bf16 operands, outputs and bias); 2x rounded up to 2e-2";
        case Precision::fp16acc:
            return "emulated chain 2.2e-2 at conv3 (half accumulation); 2x within the per-layer 5e-2";
    }
    return "";
}

double round_up_125(double x) {
    double decade = std::pow(10.0, std::floor(std::log10(x)));
    for (;;) {
        for (const double step : {1.0, 2.0, 5.0}) {
            // Compared with a relative slack: 2e-3 computed as 2 * 1e-3 must give 2e-3.
            if (step * decade >= x * (1 - 1e-12)) return step * decade;
        }
        decade *= 10;
    }
}

}  // namespace cs::gpu
