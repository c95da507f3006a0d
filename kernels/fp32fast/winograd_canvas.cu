// winograd-f4x4-canvas — winograd-f4x4 (fused F(4x4,3x3), fp32, NCHW) run on canvases of
// k x k images instead of one image at a time: the study of the tiles' border waste.
//
// Idea: a 13x13 output plane is covered by 4x4 tiles of 4x4 outputs = 16x16, so 34% of the
// Winograd work of conv3-5 falls outside the image (F(2x2): 7x7 tiles of 2x2 = 14x14, 14%).
// Placing k x k images in one canvas, D = H + pad apart (the pad rows between two images are
// the bottom padding of one and the top padding of the next: a stride-1 filter of any size
// never mixes them), makes the plane k*H + (k-1)*pad wide, and the tiles waste only what
// the canvas width leaves over a multiple of 4 plus the pad rows between the images. For
// 13x13, pad 1, k = 4: a 55x55 canvas output, 14 x 14 tiles (56x56) for 4x4 images of 13x13:
// (52/56)^2 = 86% of the tiles' outputs are used instead of (13/16)^2 = 66%.
// Run: a pack kernel writes the canvases (zero between the images and where the last
// canvas has fewer than k*k), the unchanged F(4x4) plan convolves them (its filter transform
// included), an unpack kernel copies each image's E x F outputs out of the canvas outputs.
// Everything is inside run(); the packing's cost is part of kernel_ms.
//
// Prediction (N=128): tiles 2048 -> 8 canvases x 196 = 1568 (-23%) on conv3-5, so the
// Winograd part shrinks by about that; pack + unpack move ~(22 + 25) + (33 + 2 x 35) MB on
// conv4, small against it.
// Measured: docs/findings.md, "Exact fp32 faster" (the first run against winograd-f4x4 in the
// same sweep: git show 3ab0d79:gpu/variants/winograd_canvas.cu): a smaller gain than the tiles
// predict, error unchanged. The kernel's time follows its rounds of one block per SM, not its
// tiles: conv4 768 blocks of 32 filters x 32 tiles = 5.8 rounds -> 588 = 4.5 rounds, plus the
// pack and unpack. At N=1 (one image on a 4x4 canvas then) it was slower: the canvas side now
// follows the batch (1 image: no packing gain).
// The geometry (canvas_side, canvas_geom, canvas_problem) is host code in winograd_canvas.hpp,
// the rung's supports() in fp32fast_family.cpp.
#include "buffers.hpp"
#include "cuda_check.hpp"
#include "error.hpp"
#include "fp32fast_rungs.hpp"
#include "variant.hpp"
#include "winograd_canvas.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace cs::gpu::variants {

namespace {

using fp32fast::canvas_geom;
using fp32fast::canvas_problem;
using fp32fast::canvas_side;
using fp32fast::CanvasGeom;

// canvas[nc][c][Y][X] = image (nc*k*k + (Y/D)*k + X/D), pixel (Y%D, X%D), or 0.
__global__ void pack_kernel(const float* __restrict__ in, float* __restrict__ canvas, const CanvasGeom g,
                            std::int64_t n_images, std::int64_t total) {
    const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int X = int(idx % g.Wc);
    std::int64_t q = idx / g.Wc;
    const int Y = int(q % g.Hc);
    q /= g.Hc;
    const int c = int(q % g.C);
    const std::int64_t nc = q / g.C;
    const int i = Y / g.D, y = Y - i * g.D, j = X / g.D, x = X - j * g.D;
    const std::int64_t n = nc * g.k * g.k + i * g.k + j;
    float v = 0.0f;
    if (y < g.H && x < g.W && n < n_images) v = in[((n * g.C + c) * g.H + y) * g.W + x];
    canvas[idx] = v;
}

// out[n][m][e][f] = canvas_out[n / (k*k)][m][i*D + e][j*D + f], (i, j) = image n's place.
__global__ void unpack_kernel(const float* __restrict__ cout, float* __restrict__ out, const CanvasGeom g,
                              std::int64_t total) {
    const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int f = int(idx % g.F);
    std::int64_t q = idx / g.F;
    const int e = int(q % g.E);
    q /= g.E;
    const int m = int(q % g.M);
    const std::int64_t n = q / g.M;
    const std::int64_t kk = std::int64_t(g.k) * g.k, nc = n / kk;
    const int ij = int(n - nc * kk), i = ij / g.k, j = ij - i * g.k;
    out[idx] = cout[((nc * g.M + m) * g.Ec + i * g.D + e) * std::int64_t(g.Fc) + j * g.D + f];
}

class CanvasPlan final : public Plan {
public:
    CanvasPlan(const CanvasGeom& g, std::int64_t max_canvases, std::unique_ptr<Plan> inner, Buffer cin, Buffer cout,
               std::string what)
        : g_(g), max_canvases_(max_canvases), inner_(std::move(inner)), cin_(std::move(cin)), cout_(std::move(cout)),
          what_(std::move(what)) {}

    void run(const DeviceIO& io, cudaStream_t stream) override {
        const std::int64_t kk = std::int64_t(g_.k) * g_.k;
        const std::int64_t canvases = (io.N + kk - 1) / kk;
        if (canvases > max_canvases_) throw cs::Error("winograd-f4x4-canvas: a batch larger than the plan's");
        const std::int64_t nin = canvases * g_.C * std::int64_t(g_.Hc) * g_.Wc;
        pack_kernel<<<unsigned((nin + 255) / 256), 256, 0, stream>>>(static_cast<const float*>(io.in),
                                                                     cin_.as<float>(), g_, io.N, nin);
        CS_CUDA_CHECK_LAUNCH();
        inner_->run(DeviceIO{cin_.as<float>(), io.w, cout_.as<float>(), canvases}, stream);
        const std::int64_t nout = io.N * g_.M * std::int64_t(g_.E) * g_.F;
        unpack_kernel<<<unsigned((nout + 255) / 256), 256, 0, stream>>>(cout_.as<float>(),
                                                                        static_cast<float*>(io.out), g_, nout);
        CS_CUDA_CHECK_LAUNCH();
    }
    std::size_t workspace_bytes() const override {
        return cin_.bytes() + cout_.bytes() + inner_->workspace_bytes();
    }
    std::string detail() const override { return what_ + "; inner plan: " + inner_->detail(); }
    std::string algo() const override { return "winograd"; }

private:
    CanvasGeom g_;
    std::int64_t max_canvases_;
    std::unique_ptr<Plan> inner_;
    Buffer cin_, cout_;
    std::string what_;
};

}  // namespace

std::unique_ptr<Plan> winograd_f4x4_canvas_plan(const Problem& p, const PlanContext& ctx) {
    if (auto why = winograd_f4x4_canvas_supports(p, ctx.prop)) throw Skip(*why);
    const std::int64_t max_n = std::max<std::int64_t>(1, std::max(p.N, ctx.max_chunk_N));
    const int k = canvas_side(max_n);
    const CanvasGeom g = canvas_geom(p.layer, k);
    const std::int64_t kk = std::int64_t(k) * k;
    const std::int64_t canvases = (max_n + kk - 1) / kk;
    const std::size_t bin = std::size_t(canvases) * g.C * g.Hc * g.Wc * sizeof(float);
    const std::size_t bout = std::size_t(canvases) * g.M * g.Ec * g.Fc * sizeof(float);
    if (bin + bout > ctx.workspace_limit)
        throw Skip("the canvases (" + std::to_string((bin + bout) >> 20) + " MiB) exceed the workspace limit");
    PlanContext inner_ctx = ctx;
    inner_ctx.workspace_limit = ctx.workspace_limit - bin - bout;
    inner_ctx.max_chunk_N = canvases;
    // The harness asked supports() for the layer; the canvas problem here is sized for the
    // largest call (ctx.max_chunk_N), which supports() could not know, so it is asked of the
    // inner rung here: a problem of its own, not the row's asked again.
    const Problem inner_problem = canvas_problem(p, g, canvases);
    if (auto why = winograd_f4x4_supports(inner_problem, ctx.prop)) throw Skip("canvas: " + *why);
    auto inner = winograd_f4x4_plan(inner_problem, inner_ctx);
    const std::string what = std::to_string(k) + "x" + std::to_string(k) + " images of " +
                             std::to_string(g.H) + "x" + std::to_string(g.W) + " per " + std::to_string(g.Hc) + "x" +
                             std::to_string(g.Wc) + " canvas (pitch " + std::to_string(g.D) + "), " +
                             std::to_string(canvases) + " canvas(es); pack and unpack kernels in run";
    return std::make_unique<CanvasPlan>(g, canvases, std::move(inner), Buffer(MemKind::device, bin),
                                        Buffer(MemKind::device, bout), what);
}

}  // namespace cs::gpu::variants
