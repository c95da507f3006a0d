// The Hopper family's TMA pieces on the host side (rungs 2 and 3, the halo mainloop): the driver's tensor-map
// encoders fetched through cudaGetDriverEntryPointByVersion (no -lcuda), the im2col map over
// the NHWC input and the tiled map over the KRSC weights (what TMA cannot address:
// tma_geometry_reason in geometry.hpp, host code for the rungs' supports()).
// Element-type generic: FLOAT16 / BFLOAT16 (2-byte) and FLOAT32 (the tf32 rungs: plain fp32
// data, the tensor core truncates; a TFLOAT32 map type exists but its conversion is not
// documented, so it is not used). Slice widths are chosen in bytes (128 B or 64 B rows).
#pragma once

#include "hopper_core.cuh"
#include "tma_driver.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <optional>
#include <string>
#include <type_traits>

namespace cs::gpu::variants::hopper {

// DriverFns and driver_fns(), the encoders this file's maps use: tma_driver.hpp (host code).

// k-slice width in elements of es bytes: a 128 B row (64 halves / 32 floats: 128B swizzle,
// fewer slices and barriers; measured faster on conv2 even where C=96 pads to 128 halves)
// unless C*es <= 64, where a 64 B row (32 halves / 16 floats) pads less.
inline int choose_bk(int C, int es = 2) { return C * es <= 64 ? 64 / es : 128 / es; }

template <class T>
constexpr CUtensorMapDataType tma_dtype() {
    return std::is_same_v<T, float>            ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
           : std::is_same_v<T, __nv_bfloat16> ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                               : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
}

// The tiled map over the KRSC weights {C, R*S, M}: box {box_c channels, 1 tap, bn filters};
// filters past M are zero fill. Empty string, or what the driver refused.
template <class T>
inline std::string encode_weight_map(CUtensorMap& b, const ConvGeom& g, const void* w, cuuint32_t box_c, int bn,
                                     CUtensorMapSwizzle sw, CUtensorMapL2promotion l2) {
    const DriverFns& fns = driver_fns();
    if (!fns.error.empty()) return fns.error;
    const cuuint64_t es = sizeof(T);
    const cuuint64_t dims[3] = {cuuint64_t(g.C), cuuint64_t(g.R) * g.S, cuuint64_t(g.M)};
    const cuuint64_t strides[2] = {es * g.C, es * g.C * g.R * g.S};
    const cuuint32_t box[3] = {box_c, 1, cuuint32_t(bn)};
    const cuuint32_t estr[3] = {1, 1, 1};
    const CUresult r = fns.tiled(&b, tma_dtype<T>(), 3, const_cast<void*>(w), dims, strides, box, estr,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, sw, l2, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) return "cuTensorMapEncodeTiled refused the weight map (CUresult " + std::to_string(int(r)) + ")";
    return {};
}

// Encodes both maps; returns an empty string or what the driver refused.
//   A: im2col over the NHWC input {C, W, H, N}, `pixels` (128, or 64 for a shared A tile
//      loaded half by each CTA of a cluster) x bk channels per load.
//   B: tiled over the KRSC weights {C, R*S, M}, box {bk, 1, bn}.
// bk in elements of T; bk * sizeof(T) is 128 (128B swizzle) or 64 (64B swizzle).
template <class T>
inline std::string encode_maps(CUtensorMap& a, CUtensorMap& b, const ConvGeom& g, const void* in, const void* w,
                               int bk, int bn, int pixels = kBM) {
    const DriverFns& fns = driver_fns();
    if (!fns.error.empty()) return fns.error;
    const CUtensorMapDataType dt = tma_dtype<T>();
    const cuuint64_t es = sizeof(T);
    const CUtensorMapSwizzle sw = bk * es == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;
    {
        const cuuint64_t dims[4] = {cuuint64_t(g.C), cuuint64_t(g.W), cuuint64_t(g.H), cuuint64_t(g.N)};
        const cuuint64_t strides[3] = {es * g.C, es * g.C * g.W, es * g.C * g.W * g.H};
        const Corners c = corners(g);
        const int lo[2] = {c.lo_w, c.lo_h};
        const int up[2] = {c.up_w, c.up_h};
        const cuuint32_t estr[4] = {1, cuuint32_t(g.stride), cuuint32_t(g.stride), 1};
        const CUresult r = fns.im2col(&a, dt, 4, const_cast<void*>(in), dims, strides, lo, up, cuuint32_t(bk),
                                      cuuint32_t(pixels), estr, CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
                                      CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        if (r != CUDA_SUCCESS)
            return "cuTensorMapEncodeIm2col refused the input map (CUresult " + std::to_string(int(r)) + ")";
    }
    return encode_weight_map<T>(b, g, w, cuuint32_t(bk), bn, sw, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
}

// The halo mainloop's maps (halo_conv.cu), no swizzle, 16-byte boxes wide (one plane of 8
// channels): A over the transformed input as `rows` x C, box {8, box_rows}; B over the KRSC
// weights {C, R*S, M}, box {8, 1, bn}. Rows and filters past the tensor are zero fill.
template <class T>
inline std::string encode_halo_maps(CUtensorMap& a, CUtensorMap& b, const ConvGeom& g, const void* in, const void* w,
                                    long long rows, int box_rows, int bn) {
    const DriverFns& fns = driver_fns();
    if (!fns.error.empty()) return fns.error;
    const CUtensorMapDataType dt = tma_dtype<T>();
    const cuuint64_t es = sizeof(T);
    const cuuint32_t e8 = cuuint32_t(16 / es);
    {
        const cuuint64_t dims[2] = {cuuint64_t(g.C), cuuint64_t(rows)};
        const cuuint64_t strides[1] = {es * g.C};
        const cuuint32_t box[2] = {e8, cuuint32_t(box_rows)};
        const cuuint32_t estr[2] = {1, 1};
        const CUresult r = fns.tiled(&a, dt, 2, const_cast<void*>(in), dims, strides, box, estr,
                                     CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                     CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        if (r != CUDA_SUCCESS)
            return "cuTensorMapEncodeTiled refused the halo's input map (CUresult " + std::to_string(int(r)) + ")";
    }
    return encode_weight_map<T>(b, g, w, e8, bn, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
}

// The halo mainloop's s2d=loader form: its raw input is read by bulk copies of 16-byte-aligned
// runs (no tensor map; the input must be 16-byte aligned), its weights as encode_halo_maps.
template <class T>
inline std::string encode_halo_raw_weights(CUtensorMap& b, const ConvGeom& g, const void* in, const void* w, int bn) {
    const DriverFns& fns = driver_fns();
    if (!fns.error.empty()) return fns.error;
    if (reinterpret_cast<std::uintptr_t>(in) % 16 != 0) return "the raw input is not 16-byte aligned";
    return encode_weight_map<T>(b, g, w, cuuint32_t(16 / sizeof(T)), bn, CU_TENSOR_MAP_SWIZZLE_NONE,
                                CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
}

// The NHWC output as the row-major P x M matrix for the TMA-store epilogue: box of 64 rows x
// 128 bytes of filters, 128 B swizzle (epilogue.cuh writes its staging in that pattern).
// Empty string, or why the map cannot be made (row pitch not a multiple of 16 bytes).
template <class TO>
inline std::string encode_out_map(CUtensorMap& o, const void* out, int P, int M) {
    const DriverFns& fns = driver_fns();
    if (!fns.error.empty()) return fns.error;
    const cuuint64_t es = sizeof(TO);
    if ((es * cuuint64_t(M)) % 16 != 0)
        return "the TMA-store epilogue needs rows of a multiple of 16 bytes: M * " + std::to_string(es) +
               " bytes with M = " + std::to_string(M);
    if (reinterpret_cast<std::uintptr_t>(out) % 16 != 0) return "the output is not 16-byte aligned";
    const cuuint64_t dims[2] = {cuuint64_t(M), cuuint64_t(P)};
    const cuuint64_t strides[1] = {es * cuuint64_t(M)};
    const cuuint32_t box[2] = {cuuint32_t(128 / es), 64};
    const cuuint32_t estr[2] = {1, 1};
    const CUresult r = fns.tiled(&o, tma_dtype<TO>(), 2, const_cast<void*>(out), dims, strides, box, estr,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                 CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) return "cuTensorMapEncodeTiled refused the output map (CUresult " + std::to_string(int(r)) + ")";
    return {};
}

}  // namespace cs::gpu::variants::hopper
