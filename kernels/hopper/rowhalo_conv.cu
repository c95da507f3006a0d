// hopper-rowhalo-{fp16,bf16,tf32} — the row-halo mainloop: a 3x3 stride-1 layer of 64 channels and
// 64 filters (VGG-16's conv1_2, ResNet-50's layer-1 3x3) with every input row loaded once per
// band of output rows and each tap's operand read in place from it.
//
// Why: with 64 filters the im2col GEMM (hopper-tmastore) loads every input pixel once per tap
// (9 times) for a tile only 64 filters wide, so its k-slices are bound by the A operand's L2
// traffic: VGG's conv1_2 ran at 53% of its compute bound there against cuDNN's 66%
// (docs/findings.md, "Other networks"). Here the MMA is transposed: its M is the 64 filters
// (the weights, all resident: 72 KiB) and its N a whole output row of pixels (56, 112 or 224:
// wgmma's N), so output row y of image n is, over the 9 taps (r, s) and 4 k-steps,
// m64nNk16 with B = input row y + r - pad from pixel s - pad on: one shifted descriptor into a
// slot of the input-row ring. The `operands` axis lays out the slots and the weights:
// - swizzled (the default): a pixel's 64 channels a 128-byte row in the 128B-swizzled layout,
//   as TMA writes it (a box row a pixel). Shifted by s pixels, B starts s rows into a swizzle
//   atom: the hardware swizzles on the address bits (the slots are 1024-byte aligned), so the
//   descriptor is the plain start address with base offset 0. A base offset of s was tried and
//   FAILs the check.
// - planes: 8-channel planes of one row (16 bytes a pixel, no swizzle), so 8 consecutive pixels
//   of a plane are one core matrix at any pixel offset (LBO the next plane, SBO 8 pixels), as in
//   the halo mainloop (halo_conv.cu); each TMA box row is 16 bytes.
// Per output row: one new input row from L2 (29 KiB at 224 pixels) instead of 9 im2col
// copies of it, and no weight traffic.
//
// Kernel: persistent over bands of consecutive output rows of one image (row_bands,
// rowhalo_shape.hpp), 384 threads. Warp 0, one thread: the weights once (TMA: a box a tap of
// 64 filters x 128 bytes, or (plane, tap) blocks of 64 filters x 16 bytes), then each band's
// input rows in order into a ring of kRhSlots rows (a 4D box: 64 or 8 channels x kPix pixels
// from x = -pad; the padding and the row's tail are TMA's zero fill). Warpgroups 1-2,
// ping-pong: alternate output rows (one stages its row while the other multiplies; CUTLASS's
// order barrier, PingPongOrder), 36 wgmmas a row; a row done releases its first input row, a band's last row all three. The
// accumulator (filters x pixels) is staged transposed as the NHWC row (128B swizzle, bias and
// ReLU applied) in one buffer the warpgroups take in turn; warp 1, one thread, stores it by a
// TMA box (filters x pixels x 1 row: pixels past the row's F are clipped) and frees it.
//
// Prediction (VGG conv1_2, N=128, fp16): 474 GFLOP; at the tensor pipe's ~85% a row's 36 MMAs
// take ~4.7k clocks against ~0.5k for its staging, which the other warpgroup's MMAs hide: about
// 0.6 of cuDNN's time in results/h200/networks/heuristic_vgg16_n128.csv.gz. Measured (H200,
// results/h200/networks/rowhalo_*.csv.gz, docs/findings.md "Other networks"): as predicted at
// N=32 and 128, the tensor pipe near cuBLAS's large-GEMM rate under Nsight Compute. With the
// planes the fill before the first MMA (the weights and three input rows as 16-byte TMA box
// rows) was most of the time at N=1, behind the im2col GEMM; the swizzled operands (128-byte
// box rows) were predicted to cut it by a third (rowhalo_operands.csv.gz).
//
// tf32 (4-byte channels): a pixel's 64 channels are two 128-byte atom rows, so the slots, the
// weights and the staged row each hold two atoms' blocks, the k-steps walk one atom's 4 steps
// (8 channels a step), then the other's, and a row is stored as two boxes of 32 filters. The
// resident weights take 144 KiB, which leaves room for a ring of 64-pixel slots only: a row is
// cut into segments of 56 pixels (m64n56k8), a unit one band of one segment (rh_segments).
// Predicted (VGG conv1_2, N=128, tf32): the narrow rows bound by the MMAs' shared-memory reads,
// as ResNet's l1_3x3 in fp16 (kSwizzledSmemBytesPerClk), about 0.8 of cuDNN's time, where the
// im2col GEMM took 1.1-1.4 of it. Measured (results/h200/networks/rowhalo_tf32_*.csv.gz): about
// 0.75 of cuDNN's time on both layers at N=1, 32 and 128; on conv1_2 at N=128, 0.78 of cuBLAS's
// large-GEMM tf32 rate (pct_peak) (docs/findings.md, "Other networks").
//
// Range (rowhalo_supports, supports.cpp): fp16, bf16 and tf32 (swizzled operands only), NHWC,
// C = M = 64, 3x3, stride 1, pad <= 2, F <= 224.
#include "hopper_core.cuh"
#include "hopper_tma.cuh"
#include "pipeline.cuh"
#include "rowhalo_shape.hpp"
#include "rungs.hpp"
#include "wgmma_ops_rows.cuh"

#include <cstdio>

namespace cs::gpu::variants::hopper {
namespace {

template <class T>
struct RowHaloArgs {
    int E, F, pad;
    int segs;  // row segments of kN pixels (rh_segments)
    RowBands bands;
    OutOps<T> ops;  // the chain's fused bias and ReLU
};

// Unit u's band: image n, output rows y0 .. y0 + rows - 1, the row segment from pixel x0 (the
// segments of one band are consecutive units, so neighbouring CTAs read the same input rows).
struct Band {
    int n, y0, rows, x0;
    __device__ __forceinline__ static Band of(int u, const RowBands& b, int E, int segs, int kn) {
        Band r;
        const int v = u / segs;
        r.x0 = (u - v * segs) * kn;
        r.n = v / b.bands;
        r.y0 = (v - r.n * b.bands) * b.per_band;
        r.rows = min(b.per_band, E - r.y0);
        return r;
    }
};

// kSw: the operands in the 128B-swizzled layout (the `operands` axis, rowhalo_shape.hpp).
template <class T, int kN, bool kSw>
__global__ void __launch_bounds__(384, 1)
    rowhalo_kernel(const __grid_constant__ CUtensorMap tmIn, const __grid_constant__ CUtensorMap tmW,
                   const __grid_constant__ CUtensorMap tmOut, const RowHaloArgs<T> a) {
#ifdef CS_HOPPER_DEVICE
    constexpr int kEs = int(sizeof(T));
    using H = RowHaloShape<kN, kEs>;
    static_assert(kSw || kEs == 2, "tf32 operands run swizzled");
    constexpr int kTaps = kRhR * kRhS;
    constexpr int kAtoms = H::kAtoms;
    constexpr int kAtomCh = kRhAtomBytes / kEs;                // channels (filters) in an atom's row
    constexpr std::uint32_t kWBlock = kRhFilters * 16;         // planes: one (plane, tap) block of the weights
    constexpr std::uint32_t kWAtom = kRhFilters * kRhAtomBytes;  // swizzled: one (tap, atom) block
    extern __shared__ unsigned char smem_raw[];
    const std::uint32_t raw = smem_u32(smem_raw);
    const std::uint32_t sbase = (raw + 1023u) & ~1023u;  // the staging's swizzle atoms
    unsigned char* const gbase = smem_raw + (sbase - raw);
    const std::uint32_t sStage = sbase, sW = sStage + H::kStage, sSlot = sW + H::kWeights,
                        bars = sSlot + kRhSlots * H::kSlot;
    const std::uint32_t wfull = bars, full0 = bars + 8, empty0 = full0 + 8 * kRhSlots, staged = empty0 + 8 * kRhSlots,
                        drained0 = staged + 8, order0 = drained0 + 16;
    static_assert(8 + 16 * kRhSlots + 8 + 16 + 16 <= H::kBars, "the barriers");
    const int tid = int(threadIdx.x), wg = tid >> 7, warp = tid >> 5, lane = tid & 31;
    if (tid == 0) {
        mbar_init(wfull, 1);
#pragma unroll
        for (int s = 0; s < kRhSlots; ++s) {
            mbar_init(full0 + 8 * s, 1);
            mbar_init(empty0 + 8 * s, 1);  // the warpgroup of the row that last reads it
        }
        mbar_init(staged, 1);
#pragma unroll
        for (int s = 0; s < 2; ++s) {
            mbar_init(drained0 + 8 * s, 1);  // a warpgroup's rows: the staging stored
            mbar_init(order0 + 8 * s, 1);    // ping-pong's turns
        }
        mbar_fence_init();
    }
    __syncthreads();
    if (wg == 0) {
        setmaxnreg_dec<40>();  // 128 x 40 + 256 x 232 <= 64 Ki
        if (warp == 0 && lane == 0) {
            // ---- loader: the weights once, then every band's input rows in order
            mbar_arrive_expect_tx(wfull, std::uint32_t(H::kWeights));
            if constexpr (kSw) {
                for (int t = 0; t < kTaps; ++t)  // a tap's 64 filters x 128 bytes an atom, swizzled
                    for (int at = 0; at < kAtoms; ++at)
                        tma_load_3d(sW + std::uint32_t(t * kAtoms + at) * kWAtom, &tmW, wfull, at * kAtomCh, t, 0);
            } else {
                for (int c = 0; c < kRhPlanes; ++c)
                    for (int t = 0; t < kTaps; ++t)
                        tma_load_3d(sW + std::uint32_t(c * kTaps + t) * kWBlock, &tmW, wfull, c * 8, t, 0);
            }
            long long gi = 0;  // the CTA's input rows so far
            for (int u = int(blockIdx.x); u < a.bands.units; u += int(gridDim.x)) {
                const Band b = Band::of(u, a.bands, a.E, a.segs, kN);
                for (int i = 0; i < b.rows + kRhR - 1; ++i, ++gi) {
                    const int st = int(gi % kRhSlots);
                    if (gi >= kRhSlots) mbar_wait(empty0 + 8 * st, std::uint32_t((gi / kRhSlots - 1) & 1));
                    const std::uint32_t bar = full0 + 8 * st, dst = sSlot + std::uint32_t(st) * H::kSlot;
                    mbar_arrive_expect_tx(bar, std::uint32_t(H::kSlot));
                    if constexpr (kSw) {
#pragma unroll
                        for (int at = 0; at < kAtoms; ++at)  // kPix rows of 128 bytes an atom
                            tma_load_4d(dst + std::uint32_t(at * H::kAtomSlot), &tmIn, bar, at * kAtomCh,
                                        b.x0 - a.pad, b.y0 - a.pad + i, b.n);
                    } else {
#pragma unroll
                        for (int c = 0; c < kRhPlanes; ++c)
                            tma_load_4d(dst + std::uint32_t(c * H::kPlane), &tmIn, bar, c * 8, b.x0 - a.pad,
                                        b.y0 - a.pad + i, b.n);
                    }
                }
            }
        } else if (warp == 1 && lane == 0) {
            // ---- storer: each staged row by one TMA box, then the staging is free again
            int k = 0;
            for (int u = int(blockIdx.x); u < a.bands.units; u += int(gridDim.x)) {
                const Band b = Band::of(u, a.bands, a.E, a.segs, kN);
                for (int j = 0; j < b.rows; ++j, ++k) {
                    mbar_wait(staged, std::uint32_t(k & 1));
#pragma unroll
                    for (int at = 0; at < kAtoms; ++at)  // an atom's filters of the row segment a box
                        tma_store_3d(&tmOut, sStage + std::uint32_t(at * H::kStageAtom), at * kAtomCh, b.x0,
                                     b.n * a.E + b.y0 + j);
                    bulk_commit();
                    bulk_wait_read<0>();
                    mbar_arrive(drained0 + 8 * (k & 1));
                }
            }
            bulk_wait<0>();
        }
        return;
    }
    // ---- consumers: warpgroup cw takes the CTA's rows k with k % 2 == cw
    setmaxnreg_inc<232>();
    const int ct = tid - 128, t = ct & 127;
    const int cw = __shfl_sync(0xffffffffu, ct >> 7, 0);  // warp-uniform for the compiler
    const int g = (t & 31) >> 2, q = t & 3;
    const int m0 = 16 * (t >> 5) + g;  // this thread's filters: m0 and m0 + 8
    const float b0 = a.ops.bias ? a.ops.bias_of(m0) : 0.0f, b1 = a.ops.bias ? a.ops.bias_of(m0 + 8) : 0.0f;
    const bool has_bias = a.ops.bias != nullptr, relu = a.ops.relu != 0;
    const PingPongOrder order{order0};
    mbar_wait(wfull, 0);
    long long gbase_row = 0;  // the CTA's input rows before this band
    int k = 0;                // the CTA's output rows so far
    for (int u = int(blockIdx.x); u < a.bands.units; u += int(gridDim.x)) {
        const Band b = Band::of(u, a.bands, a.E, a.segs, kN);
        for (int j = 0; j < b.rows; ++j, ++k) {
            if ((k & 1) != cw) continue;  // the other warpgroup's row
            order.wait(cw, k);
            const long long g0 = gbase_row + j;  // output row j reads input rows g0 .. g0 + 2
            std::uint32_t slot[kRhR];
#pragma unroll
            for (int r = 0; r < kRhR; ++r) {
                const long long gr = g0 + r;
                const int st = int(gr % kRhSlots);
                mbar_wait(full0 + 8 * st, std::uint32_t((gr / kRhSlots) & 1));
                slot[r] = sSlot + std::uint32_t(st) * H::kSlot;
            }
            float acc[kN / 2];
            zero(acc);
            fence_regs(acc);
            wgmma_fence();
#pragma unroll
            for (int r = 0; r < kRhR; ++r)
#pragma unroll
                for (int s = 0; s < kRhS; ++s)
#pragma unroll
                    for (int kk = 0; kk < kAtoms * kRhAtomBytes / kRhStepBytes; ++kk) {
                        std::uint64_t da, db;
                        if constexpr (kSw) {
                            // 128-byte rows, 8-row swizzle atoms (SBO 1024), kRhStepBytes of K a step,
                            // an atom's 4 steps, then the next atom's; the pixel shift s starts B s
                            // rows into an atom (base offset 0: see the top)
                            constexpr std::uint32_t kAtom = 1024, kRow = 128, kStep = kRhStepBytes;
                            constexpr int kSteps = kRhAtomBytes / kRhStepBytes;  // an atom's
                            const int at = kk / kSteps, st = kk % kSteps;
                            da = smem_desc(sW + std::uint32_t((r * kRhS + s) * kAtoms + at) * kWAtom + st * kStep,
                                           kAtom, 1);
                            db = smem_desc(slot[r] + std::uint32_t(at * H::kAtomSlot + s * kRow + st * kStep),
                                           kAtom, 1);
                        } else {
                            da = smem_desc_plain(sW + std::uint32_t(2 * kk * kTaps + r * kRhS + s) * kWBlock,
                                                 kTaps * kWBlock, 128);
                            db = smem_desc_plain(slot[r] + std::uint32_t(2 * kk * H::kPlane + s * 16), H::kPlane, 128);
                        }
                        WgmmaSS<T, kN>::mma(acc, da, db);
                    }
            wgmma_commit();
            order.arrive(cw, t);  // the other warpgroup may issue its row
            wgmma_wait<0>();
            fence_regs(acc);
            if (t == 0) {
                mbar_arrive(empty0 + 8 * int(g0 % kRhSlots));
                if (j == b.rows - 1)  // the band's last row: its other input rows too
                    for (int r = 1; r < kRhR; ++r) mbar_arrive(empty0 + 8 * int((g0 + r) % kRhSlots));
            }
            // The staging holds row k-1 until the storer has read it: that row's warpgroup's
            // barrier, its ((k-1)/2)-th phase (one thread waits, a named barrier releases the rest).
            if (k > 0) {
                if (t == 0) mbar_wait(drained0 + 8 * ((k - 1) & 1), std::uint32_t(((k - 1) >> 1) & 1));
                named_sync(2 + cw, 128);
            }
            // acc[4i + e]: filter m0 + 8 (e >> 1), pixel 8i + 2q + (e & 1); staged as NHWC rows of
            // 128 bytes an atom of filters (an atom's rows, then the next atom's), 16-byte chunk c of
            // pixel p at chunk c ^ (p & 7) (the store map's 128B swizzle).
#pragma unroll
            for (int i = 0; i < kN / 8; ++i)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int m = m0 + 8 * (e >> 1), p = 8 * i + 2 * q + (e & 1);
                    const float v = chain_bias_relu(acc[4 * i + e], (e >> 1) ? b1 : b0, has_bias, relu);
                    constexpr int kPerChunk = 16 / kEs;
                    const int at = m / kAtomCh, mm = m % kAtomCh;
                    const int off = at * H::kStageAtom + p * 128 + (((mm / kPerChunk) ^ (p & 7)) << 4) +
                                    (mm % kPerChunk) * kEs;
                    *reinterpret_cast<T*>(gbase + off) = Elem<T>::from(v);
                }
            fence_proxy_async_smem();
            named_sync(2 + cw, 128);
            if (t == 0) mbar_arrive(staged);
        }
        gbase_row += b.rows + kRhR - 1;
    }
#else
    (void)tmIn, (void)tmW, (void)tmOut, (void)a;
#endif
}

// The input's map: NHWC {C, W, H, N}, box {an atom's channels (128 bytes), kPix pixels, 1 row,
// 1 image} with 128B swizzle, or {8 channels, ...} without (the slots' planes); the weights' as
// the halo mainloop's (KRSC, box {an atom's or 8 channels, 1, 64}, the same swizzle); the
// output's: {M, F, N E}, box {an atom's filters, kN pixels, 1 row}, 128B swizzle.
template <class T>
std::string encode_rowhalo_maps(CUtensorMap& mi, CUtensorMap& mw, CUtensorMap& mo, const ConvGeom& g, const void* in,
                                const void* w, void* out, int pix, int kn, bool sw) {
    const DriverFns& fns = driver_fns();
    if (!fns.error.empty()) return fns.error;
    for (const void* ptr : {in, w, static_cast<const void*>(out)})
        if (reinterpret_cast<std::uintptr_t>(ptr) % 16 != 0) return "a tensor is not 16-byte aligned";
    const CUtensorMapDataType dt = tma_dtype<T>();
    const cuuint64_t es = sizeof(T);
    const cuuint32_t estr[4] = {1, 1, 1, 1};
    // the input rows' and the weights' boxes alike: a pixel's channels a box row, or one plane's
    const cuuint32_t inner = cuuint32_t((sw ? kRhAtomBytes : kRhPlaneBytes) / es);
    const CUtensorMapSwizzle swizzle = sw ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE;
    {
        const cuuint64_t dims[4] = {cuuint64_t(g.C), cuuint64_t(g.W), cuuint64_t(g.H), cuuint64_t(g.N)};
        const cuuint64_t strides[3] = {es * g.C, es * g.C * g.W, es * g.C * g.W * g.H};
        const cuuint32_t box[4] = {inner, cuuint32_t(pix), 1, 1};
        const CUresult r = fns.tiled(&mi, dt, 4, const_cast<void*>(in), dims, strides, box, estr,
                                     CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        if (r != CUDA_SUCCESS)
            return "cuTensorMapEncodeTiled refused the input rows' map (CUresult " + std::to_string(int(r)) + ")";
    }
    {
        const cuuint64_t dims[3] = {cuuint64_t(g.M), cuuint64_t(g.F), cuuint64_t(g.N) * g.E};
        const cuuint64_t strides[2] = {es * g.M, es * g.M * g.F};
        const cuuint32_t box[3] = {cuuint32_t(kRhAtomBytes / es), cuuint32_t(kn), 1};
        const CUresult r = fns.tiled(&mo, dt, 3, out, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                     CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        if (r != CUDA_SUCCESS)
            return "cuTensorMapEncodeTiled refused the output rows' map (CUresult " + std::to_string(int(r)) + ")";
    }
    return encode_weight_map<T>(mw, g, w, inner, kRhFilters, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
}

template <class T>
struct RowHaloGemm {
    int sms = 0;
    int kn = 0;  // the MMA's N: rh_width(F)
    RowHaloOperands operands = RowHaloOperands::swizzled;  // the `operands` axis (rh_operands)
    bool swizzled() const { return operands == RowHaloOperands::swizzled; }
    std::string info;
    // The chain's fused bias (M values of T) and ReLU for the next launch (HopperPlan sets them).
    const void* bias = nullptr;
    bool relu = false;
    CUtensorMap mi{}, mw{}, mo{};
    const void* key_in = nullptr;
    const void* key_w = nullptr;
    const void* key_out = nullptr;
    int key_n = -1;
    static constexpr int kEs = int(sizeof(T));
    static constexpr bool kTf32 = kEs == 4;  // one width (kRhTf32Width), swizzled operands only
    template <int kN, bool kSw>
    static void set_smem_one() {
        CS_CUDA_CHECK(cudaFuncSetAttribute(rowhalo_kernel<T, kN, kSw>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           RowHaloShape<kN, kEs>::kSmem));
    }
    void prepare() const {
        if constexpr (kTf32) {
            set_smem_one<kRhTf32Width, true>();
        } else {
            set_smem_one<56, false>(), set_smem_one<56, true>();
            set_smem_one<112, false>(), set_smem_one<112, true>();
            set_smem_one<224, false>(), set_smem_one<224, true>();
        }
    }
    template <int kN>
    void launch_n(const RowHaloArgs<T>& a, cudaStream_t stream) const {
        auto* k = rowhalo_kernel<T, kN, true>;
        if constexpr (!kTf32)
            if (!swizzled()) k = rowhalo_kernel<T, kN, false>;
        k<<<a.bands.grid, 384, RowHaloShape<kN, kEs>::kSmem, stream>>>(mi, mw, mo, a);
        CS_CUDA_CHECK(cudaGetLastError());
    }
    void launch(const T* in, const T* w, T* out, const ConvGeom& g, bool nchw, cudaStream_t stream) {
        if (g.P == 0) return;
        if (nchw) throw cs::Error("hopper-rowhalo: NHWC only (supports() refuses NCHW)");
        RowHaloArgs<T> a{};
        a.E = g.E, a.F = g.F, a.pad = g.pad;
        a.segs = rh_segments(g.F, kEs);
        a.bands = row_bands(g.N, g.E, sms, a.segs);
        a.ops = OutOps<T>{nullptr, static_cast<const T*>(bias), g.M, relu ? 1 : 0};
        if (in != key_in || w != key_w || out != key_out || g.N != key_n) {
            const std::string err = encode_rowhalo_maps<T>(mi, mw, mo, g, in, w, out, rh_slot_pixels(kn), kn,
                                                                swizzled());
            if (!err.empty()) throw cs::Error("hopper-rowhalo: " + err);
            key_in = in, key_w = w, key_out = out, key_n = g.N;
        }
        if constexpr (kTf32) {
            launch_n<kRhTf32Width>(a, stream);
        } else {
            if (kn == 56)
                launch_n<56>(a, stream);
            else if (kn == 112)
                launch_n<112>(a, stream);
            else
                launch_n<224>(a, stream);
        }
    }
    std::string detail() const { return info; }
    std::string config() const {
        return "width=" + std::to_string(kn) + ";operands=" + std::string(name_of(kRowHaloOperandNames, operands));
    }
    std::size_t workspace_bytes() const { return 0; }
};

template <class T>
std::unique_ptr<Plan> plan_t(const Problem& p, const PlanContext& ctx) {
    Setup u = make_setup(p);
    RowHaloGemm<T> gemm;
    gemm.sms = ctx.prop.multiProcessorCount;
    const ConvGeom& g = u.g;
    constexpr int es = int(sizeof(T));
    gemm.kn = rh_width(g.F, es);
    gemm.operands = rh_operands(p.axes.as<RowHaloOperands>("operands"));
    gemm.prepare();
    const int segs = rh_segments(g.F, es);
    const RowBands b = row_bands(int(std::max<std::int64_t>(1, ctx.max_chunk_N)), g.E, gemm.sms, segs);
    char s[768];
    std::snprintf(s, sizeof s,
                  "wgmma m64n%dk%d %s transposed (M: the 64 filters, resident, %d KiB; N: %d output row segment(s) "
                  "of %d pixels, %.1f%% of them past F), B read in place from a ring of %d input rows (%s; each of "
                  "the 3x3 taps a shifted descriptor), every input row loaded once per band; "
                  "bands of %d rows, %d CTAs on a persistent grid (at N=%lld); ping-pong consumer warpgroups on "
                  "alternate rows, each row staged as NHWC (128B swizzle) and stored by TMA boxes",
                  gemm.kn, 32 / es, Elem<T>::name, rh_weight_bytes(es) / 1024, segs, gemm.kn,
                  100.0 * (1.0 - double(g.F) / (segs * gemm.kn)), kRhSlots,
                  gemm.swizzled() ? "128-byte pixel rows, 128B swizzle" : "8-channel planes, no swizzle", b.per_band, b.grid,
                  (long long)std::max<std::int64_t>(1, ctx.max_chunk_N));
    gemm.info = s;
    return make_hopper_plan<T>(p, ctx, std::move(u), std::move(gemm));
}

}  // namespace

std::unique_ptr<Plan> rowhalo_plan(const PrecisionRow& row, const Problem& p, const PlanContext& ctx) {
    if (row.io == DType::bf16) return plan_t<__nv_bfloat16>(p, ctx);
    if (row.io == DType::f32) return plan_t<float>(p, ctx);
    return plan_t<__half>(p, ctx);
}

}  // namespace cs::gpu::variants::hopper
