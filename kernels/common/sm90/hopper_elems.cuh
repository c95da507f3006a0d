// The Hopper family (hopper_core.cuh): its element and operand types. Elem<T> converts the
// fp32 accumulator to the output type; OperandOf<T> is what the transforms apply to what they
// write (tf32 rounding for float); Split3 and Split3Half split an fp32 operand into three parts
// for the 3xTF32 and 3xFP16 rungs, scaled by the range scale (range_scale.hpp).
#pragma once

#include "range_scale.hpp"
#include "tf32_round.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace cs::gpu::variants::hopper {

// ---- element helpers ----------------------------------------------------------------------
template <class T>
struct Elem;
template <>
struct Elem<__half> {
    __device__ __forceinline__ static __half from(float x) { return __float2half_rn(x); }
    __device__ __forceinline__ static float to_float(__half x) { return __half2float(x); }
    __device__ __forceinline__ static __half2 pair(float a, float b) { return __floats2half2_rn(a, b); }
    using Pair = __half2;
    static constexpr const char* name = "fp16";
};
template <>
struct Elem<__nv_bfloat16> {
    __device__ __forceinline__ static __nv_bfloat16 from(float x) { return __float2bfloat16_rn(x); }
    __device__ __forceinline__ static float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
    __device__ __forceinline__ static __nv_bfloat162 pair(float a, float b) { return __floats2bfloat162_rn(a, b); }
    using Pair = __nv_bfloat162;
    static constexpr const char* name = "bf16";
};
// tf32: fp32 tensors in and out; wgmma m64nNk8.tf32 reads the fp32 bits of the operands in
// shared memory and uses their tf32 part (the low 13 mantissa bits are ignored: truncation).
// The output is the fp32 accumulator as it is.
template <>
struct Elem<float> {
    __device__ __forceinline__ static float from(float x) { return x; }
    __device__ __forceinline__ static float to_float(float x) { return x; }
    __device__ __forceinline__ static float2 pair(float a, float b) { return make_float2(a, b); }
    using Pair = float2;
    static constexpr const char* name = "tf32";
};

// What a transform kernel applies to each operand element it writes (the GEMM reads the
// transformed tensor): nothing for half / bfloat16 (already the MMA's type); for tf32 the
// round to nearest (cvt.rna.tf32.f32, ties away from zero, what cuBLAS/cuDNN do on Ampere),
// so that an operand that passes through a transform anyway is rounded, not truncated, by
// the tensor core — free there. Operands read in place (NHWC input, KRSC weights) are
// truncated by the tensor core; rounding them would cost a pass over the input (see
// wgmma_cpasync.cu, "tf32"). __host__ __device__ for the CPU test tests/hopper_prep_emulation.cu.
// kActive = false: the identity, and the transform's code is the plain copy (the fp16 / bf16
// kernels compile to the same machine code as before tf32 existed).
// put(o, cp, Cp, x): how a transform writes value x of channel cp into pixel o (Cp value
// channels per pixel, kParts * Cp written): o[cp] = op(x).
// What a split transform applies besides the split (range_scale.hpp): the tensor's power-of-two
// scale m0 * m1 (two floats: 2^-e may lie outside one float's range) and the test-only
// mutations' low-part factors (1 normally; lo for every channel, lo_half for channels < Cp/2).
// Read once per thread from the plan's RangeScale; the identity for the unsplit operands.
struct SplitScale {
    float m0 = 1.0f, m1 = 1.0f, lo = 1.0f, lo_half = 1.0f;
    __host__ __device__ __forceinline__ float scaled(float x) const { return x * m0 * m1; }
    __host__ __device__ __forceinline__ float lo_of(int cp, int Cp) const { return cp < Cp / 2 ? lo * lo_half : lo; }
};
// kInput: the input's scale and mutation, else the weights'; rs null: the identity.
__device__ __forceinline__ SplitScale load_split_scale(const RangeScale* rs, bool kInput) {
    SplitScale s;
    if (rs) {
        const float* m = kInput ? rs->in_mul : rs->w_mul;
        s.m0 = m[0];
        s.m1 = m[1];
        if (kInput) s.lo = rs->lo_keep_in;
        else s.lo_half = rs->lo_keep_w_half;
    }
    return s;
}

template <class T>
struct OperandOf {
    static constexpr bool kActive = false;
    static constexpr bool kScaled = false;
    static constexpr int kParts = 1;
    __host__ __device__ __forceinline__ static T op(T x) { return x; }
    __host__ __device__ __forceinline__ static void put(T* o, int cp, int, T x, const SplitScale& = {}) { o[cp] = x; }
};
template <>
struct OperandOf<float> {
    static constexpr bool kActive = true;
    static constexpr bool kScaled = false;
    static constexpr int kParts = 1;
    __host__ __device__ __forceinline__ static void put(float* o, int cp, int, float x, const SplitScale& = {}) {
        o[cp] = op(x);
    }
    __host__ __device__ __forceinline__ static float op(float x) { return rna_tf32(x); }
};

// 3xTF32 (the fp32-class rung hopper-ws-3xtf32): each fp32 operand x becomes a tf32 high part
// hi = rna(x) and a tf32 low part lo = rna(x - hi) (|x - hi - lo| <= 2^-22 |x|), written
// as three blocks of Cp channels per pixel: [hi, hi, lo] for the input (kInput) and
// [hi, lo, hi] for the weights. The unchanged tf32 GEMM over K' = R*S*3*Cp then sums
// hi*hi + hi*lo + lo*hi in its fp32 accumulators: the three tensor-core products of
// 3xTF32 (lo*lo, ~2^-22, is dropped) without a line of kernel code changed.
// Range: tf32 has fp32's exponent range, so the split itself needs no scale; the plan still
// scales both tensors (range_scale.hpp, max|x'| and max|w'| in [1, 2)) so that the low parts'
// products (~2^-11 |x w|) never reach fp32's subnormals, whatever the data's magnitude, and so
// that inf / NaN data is an ERROR like 3xFP16's. s: the scale (and the test mutations).
template <bool kInput>
struct Split3 {
    static constexpr bool kActive = true;
    static constexpr bool kScaled = true;
    static constexpr int kParts = 3;
    static constexpr int kInLog2 = 0, kWLog2 = 0;  // range_scale.hpp's targets
    __host__ __device__ __forceinline__ static void put(float* o, int cp, int Cp, float x, const SplitScale& s = {}) {
        x = s.scaled(x);
        const float hi = OperandOf<float>::op(x);
        const float lo = OperandOf<float>::op(x - hi) * s.lo_of(cp, Cp);
        o[cp] = hi;
        o[Cp + cp] = kInput ? hi : lo;
        o[2 * Cp + cp] = kInput ? lo : hi;
    }
};

// 3xFP16 (hopper-ws-3xfp16): the same three products on half operands, which the tensor core
// multiplies at twice the tf32 rate with as many significand bits (11). fp16's narrow exponent
// is what must be managed: lo = x - hi is ~2^-11 |x| and would fall into fp16's subnormals
// (< 2^-14) for |x| < 2^-3, so the low parts are stored scaled up, lo' = half((x - hi) * 2^11)
// (Ootomo & Yokota's trick), and the weights' high block carries the same factor,
// hi_w' = hi_w * 2^11 (exact): input [hi, hi, lo'], weights [hi_w', lo_w', hi_w] sum to
// 2^11 (hi*hi + hi*lo + lo*hi), which the epilogue scales back by 2^-11 (kLoLog2).
// Range: the split alone holds |w| < 2^4 (hi_w' below fp16's 65504) and |x| < 65504, and values
// under ~2^-14 lose relative precision. So the plan scales each tensor by a power of two found
// on the device (range_scale.hpp): max|x'| in [2^14, 2^15) (hi below 65504, elements down to
// 2^-28 of the max keep full precision), max|w'| in [2^3, 2^4) (hi_w' = 2^11 hi_w below 65504);
// the epilogue multiplies by 2^(ex+ew) (and 2^-11, kLoLog2). Any finite data with
// max|x| max|w| K < 2^127 is then in range; outside it the plan reports an ERROR naming it.
constexpr int kLoLog2 = 11;
constexpr int kHalfInLog2 = 14, kHalfWLog2 = 3;  // the 3xFP16 split's targets (range_scale.hpp)
template <bool kInput>
struct Split3Half {
    static constexpr bool kActive = true;
    static constexpr bool kScaled = true;
    static constexpr int kParts = 3;
    static constexpr int kInLog2 = kHalfInLog2, kWLog2 = kHalfWLog2;
    __host__ __device__ __forceinline__ static void put(__half* o, int cp, int Cp, float x, const SplitScale& s = {}) {
        x = s.scaled(x);
        const __half hi = __float2half_rn(x);
        const float hf = __half2float(hi);
        const __half lo = __float2half_rn((x - hf) * float(1 << kLoLog2) * s.lo_of(cp, Cp));  // x - hf is exact
        if (kInput) {
            o[cp] = hi;
            o[Cp + cp] = hi;
            o[2 * Cp + cp] = lo;
        } else {
            o[cp] = __float2half_rn(hf * float(1 << kLoLog2));  // exact (power of two)
            o[Cp + cp] = lo;
            o[2 * Cp + cp] = hi;
        }
    }
};

}  // namespace cs::gpu::variants::hopper
