// im2col-gemm — the lecture's "input matrix unrolling + shared-memory matrix
// multiplication" (course reports 000, opt. 1, and 002's unroll / matmul / permute kernels).
//
// Idea: GEMM makes each loaded input element serve BM filters and each weight BN output
// positions (the direct convolution reloads inputs M times). Step 1 writes the unrolled
// matrix col[k][p] (K x P, P = images * E*F) with the shared launch_im2col (bench/im2col.cu);
// step 2 is our shared-memory tiled SGEMM (gemm_common.cuh: 128x128x8 tiles with 8x8
// outputs per thread, or 64x64x16 / 32x32x32 where the big tile would leave SMs idle) with
// B read from col. Both inside run(), so kernel_ms pays for the unroll.
//
// Layout choice: the GEMM's epilogue writes NCHW directly — column p of the chunk is image
// p / (E*F), position p % (E*F), which each thread knows already — so there is no permute
// kernel (launch_mnef_to_nmef) and no M x P temporary: one GEMM launch per chunk writes the
// final output ("GEMM straight into NCHW", batched over the chunk in one launch). The
// permute would have added M*P*4 bytes written and read again and another launch.
//
// Workspace: the col buffer, K * E*F * 4 bytes per image, allocated in make_plan for the
// largest chunk of images that fits ctx.workspace_limit (all of ctx.max_chunk_N when it
// fits; run() loops over chunks otherwise); SKIP when one image does not fit.
//
// Prediction (FLOPs vs bytes): the GEMM alone runs like implicit-gemm-idx or a little faster
// (its B loads are plain coalesced rows: 32 FLOP per shared-memory byte on a 128x128x8
// tile). The buffer adds K*P*4 bytes written and at least as many read: conv2 at N=128 has
// 2400 x 93312 floats = 854 MiB, ~1.8 GB of extra DRAM traffic
// against the ~134 MB the implicit kernels move, plus the unroll kernel's own index
// arithmetic (64-bit div/mod per element). Expected: slower than implicit-gemm-idx by the
// unroll, and the col buffer caps the batch the workspace allows in one launch.
// Measured: docs/findings.md, "Direct and GEMM formulations".
//
// ptxas (sm_90, -O3), GEMM kernel: 128x128x8: 127 registers, 16640 B smem; 64x64x16:
// 79 registers, 16896 B; 32x32x32: 127 registers, 17408 B; 0 bytes spilled.
#include "buffers.hpp"
#include "gemm_common.cuh"
#include "im2col.hpp"
#include "gemm_rungs.hpp"
#include "variant.hpp"

#include <algorithm>
#include <utility>

namespace cs::gpu::variants {
namespace {

class Im2colGemmPlan final : public Plan {
public:
    Im2colGemmPlan(const ConvShape& s, std::int64_t chunk, int cfg, Buffer col, std::string detail)
        : s_(s), d_(gemm::conv_dims(s)), chunk_(chunk), cfg_(cfg), col_(std::move(col)), detail_(std::move(detail)) {}

    void run(const DeviceIO& io, cudaStream_t stream) override {
        const float* in = static_cast<const float*>(io.in);
        const float* w = static_cast<const float*>(io.w);
        float* out = static_cast<float*>(io.out);
        float* col = col_.as<float>();
        const std::int64_t out_img = std::int64_t(s_.M) * d_.EF;
        for (std::int64_t first = 0; first < io.N; first += chunk_) {
            const std::int64_t cnt = std::min(chunk_, io.N - first);
            const int P = int(cnt * d_.EF);
            launch_im2col(in + first * d_.CHW, col, s_, cnt, stream);
            const gemm::ColParams<float> bp{col, P, d_.K, P};
            gemm::launch_simt_gemm<gemm::ColMatrixB>(cfg_, w, s_.M, d_.K, P, bp,
                                                     gemm::nchw_out(out + first * out_img, s_, P), stream);
        }
    }
    std::size_t workspace_bytes() const override { return col_.bytes(); }
    std::string detail() const override { return detail_; }

private:
    ConvShape s_;
    gemm::ConvDims d_;
    std::int64_t chunk_;
    int cfg_;
    Buffer col_;
    std::string detail_;
};

}  // namespace

std::unique_ptr<Plan> im2col_gemm_plan(const Problem& p, const PlanContext& ctx) {
    const ConvShape s = conv_shape(p.layer);
    const gemm::ConvDims d = gemm::conv_dims(s);
    const std::size_t per_image = im2col_bytes(s, 1, sizeof(float));
    const std::size_t limit = ctx.workspace_limit;
    if (per_image > limit)
        throw Skip("im2col: one image's K x E*F matrix needs " + gemm::mib(double(per_image)) +
                   ", more than the workspace limit " + gemm::mib(double(limit)));
    const std::int64_t max_n = std::max<std::int64_t>(1, ctx.max_chunk_N);
    const std::int64_t chunk =
        std::max<std::int64_t>(1, std::min<std::int64_t>(max_n, std::int64_t(limit / per_image)));
    Buffer col(MemKind::device, std::size_t(chunk) * per_image);
    const std::int64_t P = chunk * d.EF;
    const gemm::TileChoice tc = gemm::choose_tile(gemm::kSimtTiles, s.M, P, ctx.prop.multiProcessorCount);
    const std::int64_t launches = (max_n + chunk - 1) / chunk;
    std::string detail = "im2col of " + std::to_string(chunk) + " image(s) per chunk into a " + std::to_string(d.K) +
                         " x " + std::to_string(P) + " col buffer (" + gemm::mib(double(col.bytes())) + "), " +
                         std::to_string(launches) + " chunk(s) per call; GEMM " +
                         gemm::tile_detail(gemm::kSimtTiles, tc, P) +
                         "; the GEMM writes NCHW from its columns, no permute kernel";
    return std::make_unique<Im2colGemmPlan>(s, chunk, tc.index, std::move(col), std::move(detail));
}

}  // namespace cs::gpu::variants
