// The direct family's entry points and the host-visible parts its kernels share: each rung's
// supports(), the constant bank's capacity and the tiled-input tiling (host code,
// direct_family.cpp, in every build); the plans (their .cu files, built with the kernels).
// direct_family.cpp names the plans through CS_PLAN (family.hpp); the plans take their geometry
// through these declarations (supports() is asked once, by the harness, before a plan is made).
#pragma once

#include "conv_shape.hpp"
#include "variant.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace cs::gpu::variants {

// ---- const-weights (direct_const_weights.cu) ----

// The whole 64 KB user constant bank, in floats: the size of the kernels' __constant__ array.
constexpr int kConstBankFloats = 64 * 1024 / 4;
// The floats of the bank this device offers: kConstBankFloats, or less where its constant
// memory is smaller.
std::int64_t bank_floats(const cudaDeviceProp& prop);

std::optional<std::string> const_weights_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> const_weights_plan(const Problem&, const PlanContext&);      // direct_const_weights.cu

// ---- restrict-unroll (direct_restrict_unroll.cu) ----

std::optional<std::string> restrict_unroll_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> restrict_unroll_plan(const Problem&, const PlanContext&);    // direct_restrict_unroll.cu

// ---- tiled-input (direct_tiled_input.cu; its file comment explains the tiling) ----

namespace tiled_input {

constexpr int kRows = 2;          // output rows per thread (e, e + BY)
constexpr int kMaxThreads = 256;  // block limit of the kernel (the geometry targets it)

// Everything the kernel needs about the tiling (host-computed; blockDim = BX x BY).
struct TileGeom {
    int tiles_f;    // tiles along F
    int ntiles;     // tiles per image
    int mgroups;    // filter groups: ceil(M / MB)
    int TE;         // output rows per tile (BY * kRows); TF = BX
    int PH, PW;     // input patch per channel: (TE-1)*stride+R rows, (BX-1)*stride+S columns
    int PWq;        // patch columns per stride phase: ceil(PW / stride)
    int pitch;      // floats per staged row (>= stride * PWq)
    int CB;         // channels per stage
    int xs_floats;  // CB * PH * pitch rounded up to 4 floats: the weights start 16-B aligned
    int LW, RP;     // input staging: threads per patch row, patch rows per pass
};

// A block shape, its filters per block and the tiling they give.
struct Choice {
    int BX = 0, BY = 0, MB = 0;
    TileGeom g{};
    std::int64_t smem = 0;  // dynamic shared memory bytes
};

// Block shape for the layer with MB filters per block, halved (rows first) until one channel's
// stage fits the device's opt-in shared memory. Returns the reason when nothing fits.
std::optional<std::string> choose(const ConvShape& s, int MB, const cudaDeviceProp& prop, Choice& out);

}  // namespace tiled_input

std::optional<std::string> tiled_input_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> tiled_input_plan(const Problem&, const PlanContext&);        // direct_tiled_input.cu

}  // namespace cs::gpu::variants
