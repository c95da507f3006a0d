// Fused Winograd F(m x m, r x r) for r x r stride-1 layers, NCHW, fp32: the kernel template
// that winograd_f2x2_3x3.cu (m = 2, r = 3), winograd_f4x4_3x3.cu (m = 4, r = 3) and
// winograd_f2x2_5x5.cu (m = 2, r = 5; also F(3x3,5x5)) instantiate. Each variant file says
// what its tile size predicts and measured. The blocks (WinoCfgR and the rungs' configurations)
// are host code in fp32fast_tiles.hpp, the rungs' supports() in fp32fast_family.cpp.
//
// Winograd (Lavin & Gray 2015): an m x m output tile of an r x r correlation is
//   Y = A^T [ sum_c (G g_c G^T) .* (B^T d_c B) ] A
// with d_c the a x a (a = m+r-1) input tile of channel c, g_c the r x r filter. With
// U[xi][m][c] = (G g G^T)[xi] of filter m and V[xi][c][t] = (B^T d B)[xi] of tile t, the
// sum over c is, for each of the a^2 positions xi, a GEMM
//   Mx[xi][m][t] = sum_c U[xi][m][c] * V[xi][c][t]
// followed by the output transform of each (m, t). Multiplies per output: r^2*C direct vs
// a^2*C/m^2 (3x3: 2.25x fewer for m = 2, 4x for m = 4; 5x5: 2.78x for m = 2, 4.59x for
// m = 3), before the tiles' waste at the borders. (Below, "(m+2)" is a = m+r-1 for r = 3.)
//
// Data flow of one run:
//   1. wino_filter_kernel: U = G g G^T of every (filter, channel), in double, rounded to
//      float, into the workspace as U[m / BM][c][xi][m % BM] (zero-padded to Mp filters and
//      Cp channels), so that a block's chunk of BC channels is one contiguous run. Inside the
//      timed run: the weights change between calls (as in training), and it costs a small
//      share of the main kernel's time (a^2*C*M floats written once).
//   2. wino_fused_kernel: block = BM filters x BN tiles, all a^2 positions; per chunk of BC
//      channels (double-buffered, cp.async):
//        - U[c0..c0+BC)[xi][m0..m0+BM) by 16-byte cp.async (L2-resident, reused by every
//          tile block);
//        - the raw (m+2)^2 input windows of the BN tiles by 4-byte cp.async, zero-filled
//          outside the image (padding and the partial tiles at the right/bottom border);
//        - input transform in shared memory into V (F(2x2): one thread per (channel, tile);
//          F(4x4): two passes, columns then rows, spread over all threads);
//        - the a^2 GEMMs: thread (xi, ty, tx) owns an 8 x 8 register tile of Mx[xi]
//          (rows ty*4 + {0, BM/2} + 0..3, columns tx*4 + {0, BN/2} + 0..3), float4 reads;
//      epilogue: accumulators -> shared memory [xi][m][t], then one thread per (m, t) does
//      the output transform and writes the m x m outputs that fall inside E x F.
//   Pipeline per chunk k: compute(k) | wait + barrier | transform(k+1) | barrier |
//   cp.async(k+2). U is double-buffered; the raw windows and V have one buffer each (the
//   raw buffer is refilled only after the transform emptied it). The loads of chunk k+2 fly
//   during compute(k+1).
//
// Tiles are laid out per image (tiles_h x tiles_w, t = (n*tiles_h + th)*tiles_w + tw); the
// border tiles of a 13 x 13 plane waste 14% (m=2: 7x7 tiles cover 14x14) and 34% (m=4:
// 4x4 tiles cover 16x16) of their work. Packing several images into one canvas
// is winograd_canvas.cu (winograd-f4x4-canvas; measured: docs/findings.md, "Exact fp32 faster").
#pragma once

#include "fp32fast_common.cuh"
#include "fp32fast_tiles.hpp"

#ifndef FP32FAST_EMU
#include "buffers.hpp"
#include "cuda_check.hpp"
#include "error.hpp"
#include "variant.hpp"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#endif

namespace cs::gpu::variants::fp32fast {

// ---- the transforms (1-D; the 2-D ones apply them to columns, then rows) ---------------------

template <int MT, int R = 3>
struct Wino;

// F(2,3): B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1],
// A^T = [1 1 1 0; 0 1 -1 -1].
template <>
struct Wino<2, 3> {
    static constexpr int A = 4;
    template <class T>
    __host__ __device__ static void filt(const T g[3], T u[4]) {
        u[0] = g[0];
        u[1] = T(0.5) * (g[0] + g[1] + g[2]);
        u[2] = T(0.5) * (g[0] - g[1] + g[2]);
        u[3] = g[2];
    }
    __host__ __device__ static void in(const float d[4], float o[4]) {
        o[0] = d[0] - d[2];
        o[1] = d[1] + d[2];
        o[2] = d[2] - d[1];
        o[3] = d[1] - d[3];
    }
    __host__ __device__ static void out(const float m[4], float y[2]) {
        y[0] = m[0] + m[1] + m[2];
        y[1] = m[1] - m[2] - m[3];
    }
};

// F(4,3) with the points 0, +-1, +-2 (Lavin & Gray):
// B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]
// G   = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1]
// A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
template <>
struct Wino<4, 3> {
    static constexpr int A = 6;
    template <class T>
    __host__ __device__ static void filt(const T g[3], T u[6]) {
        u[0] = g[0] / T(4);
        u[1] = -(g[0] + g[1] + g[2]) / T(6);
        u[2] = -(g[0] - g[1] + g[2]) / T(6);
        u[3] = g[0] / T(24) + g[1] / T(12) + g[2] / T(6);
        u[4] = g[0] / T(24) - g[1] / T(12) + g[2] / T(6);
        u[5] = g[2];
    }
    __host__ __device__ static void in(const float d[6], float o[6]) {
        o[0] = 4.0f * d[0] - 5.0f * d[2] + d[4];
        o[1] = -4.0f * (d[1] + d[2]) + (d[3] + d[4]);
        o[2] = 4.0f * (d[1] - d[2]) + (d[4] - d[3]);
        o[3] = 2.0f * (d[3] - d[1]) + (d[4] - d[2]);
        o[4] = 2.0f * (d[1] - d[3]) + (d[4] - d[2]);
        o[5] = 4.0f * d[1] - 5.0f * d[3] + d[5];
    }
    __host__ __device__ static void out(const float m[6], float y[4]) {
        const float s12 = m[1] + m[2], d12 = m[1] - m[2], s34 = m[3] + m[4], d34 = m[3] - m[4];
        y[0] = m[0] + s12 + s34;
        y[1] = d12 + 2.0f * d34;
        y[2] = s12 + 4.0f * s34;
        y[3] = d12 + 8.0f * d34 + m[5];
    }
};

// 5x5 filters (conv2): the matrices by Toom-Cook from the points below (tools/dev/fp32fast/
// wino_derive.py derives them and checks them against F(4,3)'s). The points were chosen by the
// error of a float32 model of the whole 2-D algorithm on conv2's statistics (C = 96, max|err| /
// max|ref|, 3 seeds; wino_derive.py's --sim): F(2,5) {0, +-1, +-2, inf} 4-5e-6, {0, +-1, +-1/2,
// inf} 4-6e-6, {0, +-1, 2, -1/2, inf} 1.9-2.6e-6 (taken; its mirror {0, +-1, 1/2, -2} the same).
//
// F(2,5) with the points 0, 1, -1, 2, -1/2, inf:
// B^T = [1 3/2 -2 -3/2 1 0; 0 -1 -5/2 -1/2 1 0; 0 1 1/2 -5/2 1 0; 0 -1/2 -1 1/2 1 0;
//        0 2 -1 -2 1 0; 0 1 3/2 -2 -3/2 1]
// G   = [1 0 0 0 0; -1/3 (x5); 1/3 -1/3 1/3 -1/3 1/3; 1/15 2/15 4/15 8/15 16/15;
//        -16/15 8/15 -4/15 2/15 -1/15; 0 0 0 0 1]
// A^T = [1 1 1 1 1 0; 0 1 -1 2 -1/2 1]
template <>
struct Wino<2, 5> {
    static constexpr int A = 6;
    template <class T>
    __host__ __device__ static void filt(const T g[5], T u[6]) {
        u[0] = g[0];
        u[1] = -(g[0] + g[1] + g[2] + g[3] + g[4]) / T(3);
        u[2] = (g[0] - g[1] + g[2] - g[3] + g[4]) / T(3);
        u[3] = (g[0] + T(2) * g[1] + T(4) * g[2] + T(8) * g[3] + T(16) * g[4]) / T(15);
        u[4] = -(T(16) * g[0] - T(8) * g[1] + T(4) * g[2] - T(2) * g[3] + g[4]) / T(15);
        u[5] = g[4];
    }
    __host__ __device__ static void in(const float d[6], float o[6]) {
        // Written out row by row: the factored form (shared d1-d3, d4-d2) made ptxas spill 8
        // bytes in the 576-thread block (96-register cap); this one does not.
        o[0] = d[0] + 1.5f * d[1] - 2.0f * d[2] - 1.5f * d[3] + d[4];
        o[1] = -d[1] - 2.5f * d[2] - 0.5f * d[3] + d[4];
        o[2] = d[1] + 0.5f * d[2] - 2.5f * d[3] + d[4];
        o[3] = -0.5f * d[1] - d[2] + 0.5f * d[3] + d[4];
        o[4] = 2.0f * d[1] - d[2] - 2.0f * d[3] + d[4];
        o[5] = d[1] + 1.5f * d[2] - 2.0f * d[3] - 1.5f * d[4] + d[5];
    }
    __host__ __device__ static void out(const float m[6], float y[2]) {
        y[0] = m[0] + m[1] + m[2] + m[3] + m[4];
        y[1] = (m[1] - m[2]) + 2.0f * m[3] - 0.5f * m[4] + m[5];
    }
};

// F(3,5) with the points 0, 1, -1, 2, -2, 1/2, inf (float32 model: 6-7e-6; {0, +-1, +-1/2, +-2}
// 7-9e-6, {0, +-1, +-2, 3} 1.8e-4):
// B^T = [-2 4 5/2 -5 -1/2 1 0; 0 2 -2 -9/2 1/2 1 0; 0 -2 6 -7/2 -3/2 1 0; 0 1 -3/2 -2 3/2 1 0;
//        0 -1 5/2 0 -5/2 1 0; 0 4 0 -5 0 1 0; 0 -2 4 5/2 -5 -1/2 1]
// G   = [-1/2 0 0 0 0; -1/3 (x5); 1/9 -1/9 1/9 -1/9 1/9; 1/36 1/18 1/9 2/9 4/9;
//        -1/60 1/30 -1/15 2/15 -4/15; 32/45 16/45 8/45 4/45 2/45; 0 0 0 0 1]
// A^T = [1 1 1 1 1 1 0; 0 1 -1 2 -2 1/2 0; 0 1 1 4 4 1/4 1]
template <>
struct Wino<3, 5> {
    static constexpr int A = 7;
    template <class T>
    __host__ __device__ static void filt(const T g[5], T u[7]) {
        u[0] = -g[0] / T(2);
        u[1] = -(g[0] + g[1] + g[2] + g[3] + g[4]) / T(3);
        u[2] = (g[0] - g[1] + g[2] - g[3] + g[4]) / T(9);
        u[3] = (g[0] + T(2) * g[1] + T(4) * g[2] + T(8) * g[3] + T(16) * g[4]) / T(36);
        u[4] = -(g[0] - T(2) * g[1] + T(4) * g[2] - T(8) * g[3] + T(16) * g[4]) / T(60);
        u[5] = (T(32) * g[0] + T(16) * g[1] + T(8) * g[2] + T(4) * g[3] + T(2) * g[4]) / T(45);
        u[6] = g[4];
    }
    __host__ __device__ static void in(const float d[7], float o[7]) {
        o[0] = -2.0f * d[0] + 4.0f * d[1] + 2.5f * d[2] - 5.0f * d[3] - 0.5f * d[4] + d[5];
        o[1] = 2.0f * (d[1] - d[2]) - 4.5f * d[3] + 0.5f * d[4] + d[5];
        o[2] = -2.0f * d[1] + 6.0f * d[2] - 3.5f * d[3] - 1.5f * d[4] + d[5];
        o[3] = d[1] - 1.5f * (d[2] - d[4]) - 2.0f * d[3] + d[5];
        o[4] = 2.5f * (d[2] - d[4]) - d[1] + d[5];
        o[5] = 4.0f * d[1] - 5.0f * d[3] + d[5];
        o[6] = -2.0f * d[1] + 4.0f * d[2] + 2.5f * d[3] - 5.0f * d[4] - 0.5f * d[5] + d[6];
    }
    __host__ __device__ static void out(const float m[7], float y[3]) {
        const float s12 = m[1] + m[2], d12 = m[1] - m[2], s34 = m[3] + m[4], d34 = m[3] - m[4];
        y[0] = m[0] + s12 + s34 + m[5];
        y[1] = d12 + 2.0f * d34 + 0.5f * m[5];
        y[2] = s12 + 4.0f * s34 + 0.25f * m[5] + m[6];
    }
};

// ---- configuration: WinoCfgR / WinoCfg (fp32fast_tiles.hpp) --------------------------------------

struct WinoArgs {
    const float* in;
    const float* U;
    float* out;
    int C, H, W, M, E, F, pad;
    int tiles_w, tpi, T;  // tiles per row, per image, in the call
    int Mp, Cp, tiles_m;
    int HW;
    std::int64_t CHW;
};

// ---- 1. filter transform -------------------------------------------------------------------------
// Block: 32 filters x 8 channels (256 threads); the 32 x 8R^2 weights (3x3: 32 x 72) are staged
// in shared memory (coalesced reads along c*R^2), each thread transforms one (m, c) in double
// and writes its a^2 values to U[m / BM][c][xi][m % BM] (coalesced along m; one block's chunk
// is contiguous). Shared memory: wino_filter_smem<R>() bytes.
template <int R>
constexpr int wino_filter_smem() {
    return 32 * (8 * R * R + 1) * 4;
}

template <int MT, int BM, int R = 3>
__global__ void __launch_bounds__(256) wino_filter_kernel(const float* __restrict__ w, float* __restrict__ U, int M,
                                                          int C, int Mp, int Cp) {
    constexpr int A = MT + R - 1, NX = A * A, KK = R * R, ROW = 8 * KK, LDW = ROW + 1;
    FF_DYN_SMEM(float, ws);  // [32][LDW]
    const int tid = int(threadIdx.x), tx = tid % 32, ty = tid / 32;
    const int m0 = int(blockIdx.x) * 32, c0 = int(blockIdx.y) * 8;
    for (int e = tid; e < 32 * ROW; e += 256) {
        const int row = e / ROW, col = e % ROW;
        const int gm = m0 + row, gc = c0 + col / KK;
        ws[row * LDW + col] = (gm < M && gc < C) ? w[(std::int64_t(gm) * C + c0) * KK + col] : 0.0f;
    }
    __syncthreads();
    const int m = m0 + tx, c = c0 + ty;
    if (m < Mp && c < Cp) {
        double t[A][R];
        for (int j = 0; j < R; ++j) {
            double col[R], o[A];
            for (int i = 0; i < R; ++i) col[i] = double(ws[tx * LDW + ty * KK + i * R + j]);
            Wino<MT, R>::filt(col, o);
            for (int a = 0; a < A; ++a) t[a][j] = o[a];
        }
        for (int a = 0; a < A; ++a) {
            double u[A];
            Wino<MT, R>::filt(t[a], u);
            for (int b = 0; b < A; ++b) U[((std::int64_t(m / BM) * Cp + c) * NX + a * A + b) * BM + m % BM] = float(u[b]);
        }
    }
}

// ---- 2. the fused kernel -------------------------------------------------------------------------
template <class Cfg>
__global__ void __launch_bounds__(Cfg::NT, 1) wino_fused_kernel(const WinoArgs a) {
    constexpr int MT = Cfg::MT, A = Cfg::A, NX = Cfg::NX, NT = Cfg::NT, BM = Cfg::BM, BN = Cfg::BN, BC = Cfg::BC;
    constexpr int LDU = Cfg::LDU, LDV = Cfg::LDV, LDM = Cfg::LDM, RPT = Cfg::RPT, UPT = Cfg::UPT;

    FF_DYN_SMEM(float, smem);
    float* Us = smem;                 // [2][BC][NX][LDU]
    float* Raw = smem + 2 * Cfg::US;  // [BC][NX][BN]
    float* Vs = Raw + Cfg::RS;        // [BC][NX][LDV]

    const int tid = int(threadIdx.x);
    const int mt = int(blockIdx.x % unsigned(a.tiles_m)), bt = int(blockIdx.x / unsigned(a.tiles_m));
    const int m0 = mt * BM, t0 = bt * BN;

    // This thread's raw-window elements: (position, tile) pairs q = tid + j*NT (pos = q / BN,
    // tile = q % BN), fixed for every channel; roff = offset of channel 0 in `in`, -1 when the
    // element is padding or past the last tile. (32-bit: supports() bounds N*C*H*W.)
    int roff[RPT];
#pragma unroll
    for (int j = 0; j < RPT; ++j) {
        const int q = tid + j * NT, pos = q / BN, t = t0 + q % BN;
        roff[j] = -1;
        if ((Cfg::RAW_EXACT || q < NX * BN) && t < a.T) {
            const int n = t / a.tpi, rem = t - n * a.tpi, th = rem / a.tiles_w, tw = rem - th * a.tiles_w;
            const int ih = th * MT - a.pad + pos / A, iw = tw * MT - a.pad + pos % A;
            if (unsigned(ih) < unsigned(a.H) && unsigned(iw) < unsigned(a.W)) roff[j] = (n * a.C * a.H + ih) * a.W + iw;
        }
    }
    // U of this block's filters: [c][xi][BM] contiguous (the workspace is [m-block][c][xi][BM]).
    const float* ublk = a.U + std::int64_t(mt) * a.Cp * NX * BM;

    auto load_chunk = [&](int stage, int kc) {
        const int c0 = kc * BC;
        float* us = Us + stage * Cfg::US;
        const float* usrc = ublk + std::int64_t(c0) * NX * BM;
#pragma unroll
        for (int i = 0; i < UPT; ++i) {
            const int q = tid + i * NT;  // 16-byte piece q of the chunk: row q / (BM/4) = c*NX + xi
            if (!Cfg::U_EXACT && q >= BC * NX * BM / 4) break;
            cp_async16(us + (q / (BM / 4)) * LDU + (q % (BM / 4)) * 4, usrc + q * 4);
        }
        float* raw = Raw + tid;
#pragma unroll
        for (int j = 0; j < RPT; ++j) {
            if (!Cfg::RAW_EXACT && tid + j * NT >= NX * BN) break;
#pragma unroll
            for (int c = 0; c < BC; ++c) {
                const bool ok = roff[j] >= 0 && (c0 + c < a.C);
                cp_async4(raw + c * NX * BN + j * NT, a.in + (ok ? roff[j] + (c0 + c) * a.HW : 0), ok);
            }
        }
    };

    // Input transform of the raw windows into Vs. One pass: one thread per (channel, tile)
    // does the whole 2-D transform (F(2x2): 16 loads, 32 adds, 16 stores; it holds the a x a
    // window in registers beside the 64 accumulators). Two passes (the default): columns in
    // place in Raw, barrier, then rows into Vs, spread over all threads, a row or column in
    // registers at a time (F(4x4): the one-pass form would leave all but BC*BN threads
    // waiting at the barrier; F(2x2) with 16 channels per stage: the one-pass form spills).
    auto transform = [&]() {
        float* raw = Raw;
        if constexpr (!Cfg::TWO_PASS) {
            if (tid < BC * BN) {
                const int c = tid / BN, tile = tid % BN;
                const float* rw = raw + c * NX * BN + tile;
                float t[A][A];
#pragma unroll
                for (int j = 0; j < A; ++j) {
                    float col[A], o[A];
#pragma unroll
                    for (int i = 0; i < A; ++i) col[i] = rw[(i * A + j) * BN];
                    Wino<MT, Cfg::R>::in(col, o);
#pragma unroll
                    for (int i = 0; i < A; ++i) t[i][j] = o[i];
                }
                float* vs = Vs + c * NX * LDV + tile;
#pragma unroll
                for (int i = 0; i < A; ++i) {
                    float o[A];
                    Wino<MT, Cfg::R>::in(t[i], o);
#pragma unroll
                    for (int j = 0; j < A; ++j) vs[(i * A + j) * LDV] = o[j];
                }
            }
        } else {
            // pass 1: item (c, j, tile) transforms column j of a window in place
            for (int item = tid; item < BC * A * BN; item += NT) {
                const int tile = item % BN, cj = item / BN, c = cj / A, j = cj % A;
                float* rw = raw + (c * NX + j) * BN + tile;
                float col[A], o[A];
#pragma unroll
                for (int i = 0; i < A; ++i) col[i] = rw[i * A * BN];
                Wino<MT, Cfg::R>::in(col, o);
#pragma unroll
                for (int i = 0; i < A; ++i) rw[i * A * BN] = o[i];
            }
            __syncthreads();
            // pass 2: item (c, i, tile) transforms row i into Vs
            for (int item = tid; item < BC * A * BN; item += NT) {
                const int tile = item % BN, ci = item / BN, c = ci / A, i = ci % A;
                const float* rw = raw + (c * NX + i * A) * BN + tile;
                float row[A], o[A];
#pragma unroll
                for (int j = 0; j < A; ++j) row[j] = rw[j * BN];
                Wino<MT, Cfg::R>::in(row, o);
                float* vs = Vs + (c * NX + i * A) * LDV + tile;
#pragma unroll
                for (int j = 0; j < A; ++j) vs[j * LDV] = o[j];
            }
        }
    };

    const int xi = tid / Cfg::TPX, r = tid % Cfg::TPX, ty = r / Cfg::GN, tx = r % Cfg::GN;
    const bool owns_tile = Cfg::NXP == NX || xi < NX;  // false only for the padding positions
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

    auto compute = [&](int stage) {
        if (!owns_tile) return;
        const float* us = Us + stage * Cfg::US + xi * LDU + ty * 4;
        const float* vs = Vs + xi * LDV + tx * 4;
#pragma unroll
        for (int c = 0; c < BC; ++c) {
            const float4 a0 = *reinterpret_cast<const float4*>(us + c * NX * LDU);
            const float4 a1 = *reinterpret_cast<const float4*>(us + c * NX * LDU + BM / 2);
            const float4 b0 = *reinterpret_cast<const float4*>(vs + c * NX * LDV);
            const float4 b1 = *reinterpret_cast<const float4*>(vs + c * NX * LDV + BN / 2);
            const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
    };

    const int nchunks = a.Cp / BC;
    load_chunk(0, 0);
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
    transform();
    __syncthreads();  // Raw free, Vs holds chunk 0
    if (nchunks > 1) load_chunk(1, 1);
    cp_async_commit();
    for (int kc = 0; kc < nchunks; ++kc) {
        compute(kc & 1);
        cp_async_wait<0>();
        __syncthreads();  // chunk kc+1 landed everywhere; every thread is done with Us[kc&1] and Vs
        if (kc + 1 < nchunks) transform();
        __syncthreads();  // Vs holds chunk kc+1; Raw is free again
        if (kc + 2 < nchunks) load_chunk(kc & 1, kc + 2);
        cp_async_commit();
    }

    // Epilogue: Mx[xi][m][t] into shared memory (the main-loop buffers are dead), then the
    // output transform, one (m, t) per thread and step.
    float* Ms = smem;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        if (!owns_tile) break;
        const int m = ty * 4 + (i & 3) + (i >> 2) * (BM / 2);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int n = tx * 4 + h * (BN / 2);
            *reinterpret_cast<float4*>(Ms + (xi * BM + m) * LDM + n) =
                float4{acc[i][h * 4 + 0], acc[i][h * 4 + 1], acc[i][h * 4 + 2], acc[i][h * 4 + 3]};
        }
    }
    __syncthreads();
    for (int item = tid; item < BM * BN; item += NT) {
        const int m = item / BN, tile = item % BN, gm = m0 + m, t = t0 + tile;
        if (gm >= a.M || t >= a.T) continue;
        float t2[MT][A];
#pragma unroll
        for (int j = 0; j < A; ++j) {
            float col[A], o[MT];
#pragma unroll
            for (int i = 0; i < A; ++i) col[i] = Ms[((i * A + j) * BM + m) * LDM + tile];
            Wino<MT, Cfg::R>::out(col, o);
#pragma unroll
            for (int i = 0; i < MT; ++i) t2[i][j] = o[i];
        }
        const int n = t / a.tpi, rem = t - n * a.tpi, th = rem / a.tiles_w, tw = rem - th * a.tiles_w;
        float* o = a.out + (std::int64_t(n) * a.M + gm) * (std::int64_t(a.E) * a.F);
#pragma unroll
        for (int i = 0; i < MT; ++i) {
            float y[MT];
            Wino<MT, Cfg::R>::out(t2[i], y);
            const int oh = th * MT + i;
#pragma unroll
            for (int j = 0; j < MT; ++j) {
                const int ow = tw * MT + j;
                if (oh < a.E && ow < a.F) o[oh * a.F + ow] = y[j];
            }
        }
    }
}

// ---- launch ------------------------------------------------------------------------------------------

struct WinoDims {
    int C, H, W, M, E, F, pad;
    int tiles_h, tiles_w, tpi, Mp, Cp;
};

template <class Cfg>
WinoDims wino_dims(int C, int H, int W, int M, int pad) {
    WinoDims d{};
    d.C = C, d.H = H, d.W = W, d.M = M, d.pad = pad;
    d.E = H + 2 * pad - (Cfg::R - 1);
    d.F = W + 2 * pad - (Cfg::R - 1);
    d.tiles_h = (d.E + Cfg::MT - 1) / Cfg::MT;
    d.tiles_w = (d.F + Cfg::MT - 1) / Cfg::MT;
    d.tpi = d.tiles_h * d.tiles_w;
    d.Mp = round_up(M, Cfg::BM);
    d.Cp = round_up(C, Cfg::BC);
    return d;
}

template <class Cfg>
void wino_enqueue(const WinoDims& d, const float* in, const float* w, float* U, float* out, std::int64_t N,
                  cudaStream_t stream) {
    auto fk = &wino_filter_kernel<Cfg::MT, Cfg::BM, Cfg::R>;
    const dim3 fgrid(unsigned(d.Mp / 32), unsigned((d.Cp + 7) / 8));
    FF_LAUNCH(fk, fgrid, 256, wino_filter_smem<Cfg::R>(), stream, w, U, d.M, d.C, d.Mp, d.Cp);
    FF_CHECK_LAUNCH();
    WinoArgs a{};
    a.in = in, a.U = U, a.out = out;
    a.C = d.C, a.H = d.H, a.W = d.W, a.M = d.M, a.E = d.E, a.F = d.F, a.pad = d.pad;
    a.tiles_w = d.tiles_w, a.tpi = d.tpi, a.T = int(N * d.tpi);
    a.Mp = d.Mp, a.Cp = d.Cp, a.tiles_m = d.Mp / Cfg::BM;
    a.HW = d.H * d.W;
    a.CHW = std::int64_t(d.C) * a.HW;
    const std::int64_t blocks = std::int64_t(a.tiles_m) * ((a.T + Cfg::BN - 1) / Cfg::BN);
    if (blocks == 0) return;
    auto k = &wino_fused_kernel<Cfg>;
    FF_LAUNCH(k, unsigned(blocks), Cfg::NT, Cfg::SMEM, stream, a);
    FF_CHECK_LAUNCH();
}

// Which of two blocks of one tile size (Narrow: BN tiles, Wide: twice as many) a layer runs
// faster with, at one block per SM either way: rounds of blocks times the block's relative
// time (Wide does twice Narrow's work; Narrow's lower efficiency, the factor 1.12 below, was
// measured with F(4x4) on conv3 at N=128 on the H200: git show 3ab0d79:gpu/variants/winograd_fused.cuh).
template <class Narrow, class Wide>
inline bool wino_use_wide(const Layer& l, std::int64_t N, const cudaDeviceProp& prop) {
    static_assert(Narrow::MT == Wide::MT && Narrow::BM == Wide::BM && Wide::BN == 2 * Narrow::BN,
                  "two blocks of one tile size, the wide one twice the narrow one's tiles");
    if (prop.sharedMemPerBlockOptin < std::size_t(Wide::SMEM)) return false;
    constexpr int MT = Narrow::MT;
    const std::int64_t tiles = std::max<std::int64_t>(1, N) * ((l.E() + MT - 1) / MT) * ((l.F() + MT - 1) / MT);
    const std::int64_t mblocks = (l.M + Narrow::BM - 1) / Narrow::BM, sms = prop.multiProcessorCount;
    const std::int64_t bn = mblocks * ((tiles + Narrow::BN - 1) / Narrow::BN);
    const std::int64_t bw = mblocks * ((tiles + Wide::BN - 1) / Wide::BN);
    const double narrow = double((bn + sms - 1) / sms) * 1.12, wide = double((bw + sms - 1) / sms) * 2.0;
    return wide < narrow;
}

#ifndef FP32FAST_EMU
template <class Cfg>
class WinoPlan final : public Plan {
public:
    WinoPlan(const Problem& p, const PlanContext& ctx, const char* what) {
        const Layer& l = p.layer;
        d_ = wino_dims<Cfg>(l.C, l.H, l.W, l.M, l.pad);
        const std::size_t u_bytes = std::size_t(d_.Cp) * Cfg::NX * std::size_t(d_.Mp) * 4;
        if (u_bytes > ctx.workspace_limit)
            throw Skip("transformed filters need " + std::to_string(u_bytes) + " bytes, over the workspace limit");
        U_ = Buffer(MemKind::device, u_bytes);
        CS_CUDA_CHECK(
            cudaFuncSetAttribute(wino_fused_kernel<Cfg>, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::SMEM));
        const std::int64_t T = std::max<std::int64_t>(1, ctx.max_chunk_N) * d_.tpi;
        const std::int64_t blocks = std::int64_t(d_.Mp / Cfg::BM) * ((T + Cfg::BN - 1) / Cfg::BN);
        const double waste = 1.0 - double(d_.E) * d_.F / (double(d_.tiles_h) * Cfg::MT * d_.tiles_w * Cfg::MT);
        char wbuf[32];
        std::snprintf(wbuf, sizeof wbuf, "%.0f%%", 100.0 * waste);
        detail_ = std::string(what) + " fused: block " + std::to_string(Cfg::BM) + " filters x " +
                  std::to_string(Cfg::BN) + " tiles x " + std::to_string(Cfg::NX) + " positions, " +
                  std::to_string(Cfg::NT) + " threads, " + std::to_string(Cfg::BC) + " channels/stage, " +
                  std::to_string(blocks) + " blocks for " + std::to_string(T) + " tiles (border waste " + wbuf +
                  "); filter transform each run into " + std::to_string(u_bytes >> 10) + " KiB";
    }
    void run(const DeviceIO& io, cudaStream_t stream) override {
        wino_enqueue<Cfg>(d_, static_cast<const float*>(io.in), static_cast<const float*>(io.w), U_.as<float>(),
                          static_cast<float*>(io.out), io.N, stream);
    }
    std::size_t workspace_bytes() const override { return U_.bytes(); }
    std::string detail() const override { return detail_; }

private:
    WinoDims d_{};
    Buffer U_;
    std::string detail_;
};

// A fused Winograd rung's plan (its supports() said yes: the harness asks once): its block
// (Narrow), or the block of twice as many tiles where wino_use_wide picks it (Wide = Narrow:
// a rung of one block).
template <class Narrow, class Wide = Narrow>
std::unique_ptr<Plan> wino_plan(const Problem& p, const PlanContext& ctx, const char* what) {
    if constexpr (!std::is_same_v<Narrow, Wide>)
        if (wino_use_wide<Narrow, Wide>(p.layer, ctx.max_chunk_N, ctx.prop))
            return std::make_unique<WinoPlan<Wide>>(p, ctx, what);
    return std::make_unique<WinoPlan<Narrow>>(p, ctx, what);
}
#endif  // FP32FAST_EMU

}  // namespace cs::gpu::variants::fp32fast
