// The pass rule of a chain's layer outputs, beside the per-layer rule of
// tolerance.hpp, whose thresholds it does not change.
//
// A chain run is checked against the chain golden files (goldenio/golden_chain.hpp) at every
// layer's post-op output: no element NaN/Inf and max_rel_err = max|out - golden| /
// max|golden| <= chain_threshold(p), for each layer. The per-element rule of tolerance.hpp
// (|err| <= tau * sum|w*x| + u_out * |golden|) does not carry over: from the second layer on,
// a layer's input is the run's own previous output, not the golden one, so its errors are
// not those of one dot product of the golden data.
//
// Derivation (tests/test_chain_tolerance.cpp; reference/chain_emulation.hpp emulates each
// class through the whole chain: operands rounded to the class's format at every layer's
// input, tf32 both to nearest and truncated; float accumulation or, for fp16acc, half after
// every fma; the bias stored and the output rounded in the class's output format; pools
// exact), compared layer by layer with the double chain (chain_ref<double>). Largest
// max_rel_err over the layers, on AlexNet's chain at N = 1 and 2 and on
// tests/data/chain_small.json at N = 1 and 2:
//   class     worst (layer)                              2 x worst   per-layer   chain threshold
//   fp32      2.1e-6 (conv5)                             4.3e-6      1e-4        1e-4
//   tf32      6.4e-4 RN (conv4, N=2), 3.3e-3 RZ (conv5)  6.6e-3      5e-3        1e-2
//   fp16      6.8e-4 (conv5, N=2)                        1.4e-3      5e-3        5e-3
//   bf16      5.7e-3 (conv5)                             1.1e-2      1e-2        2e-2
//   fp16acc   2.2e-2 (conv3)                             4.3e-2      5e-2        5e-2
// The rule: chain_threshold(p) = max(threshold(p), the smallest 1-2-5 step >= 2 x worst):
// the emulated chain uses at most half of it (the per-layer rule's margin: its correct
// results stay within 0.5 of the threshold), and a layer inside a chain is never held
// tighter than the same layer alone (an fp32 FFT or Winograd engine reaches 2e-5 on one
// layer). The truncated tf32 operands drift one way (each rounding shrinks |x| and |w|), so
// their error grows through the chain (7.4e-4 at conv1 to 3.3e-3 at conv5), past the
// per-layer 5e-3's half; bf16 likewise doubles from conv1 to conv5.
#pragma once

#include "variant.hpp"

namespace cs::gpu {

// Limit on max_rel_err of every layer output of a chain run.
double chain_threshold(Precision p);
// One line: the emulated worst case and the rule, for `list` and the docs.
const char* chain_threshold_reason(Precision p);
// The rule's rounding: the smallest value of 1, 2, 5 x 10^k that is >= x (x > 0).
double round_up_125(double x);

}  // namespace cs::gpu
