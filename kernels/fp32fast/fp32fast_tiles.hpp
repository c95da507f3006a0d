// The exact-fp32 fast family's tiles, host code: the block shapes and shared-memory sizes that
// the rungs' supports() and the sweep's axes (fp32fast_family.cpp) read and the kernels are
// built from (simt_gemm.cu, split_tf32.cu, winograd_fused.cuh and the winograd_*.cu that pick
// its configurations, winograd_3xfp16.cuh / .cu, hopper/winograd_wgmma*.cu), one definition for
// both. Each kernel file says what its tile does and measured; tools/dev/fp32fast's emulation
// builds these too.
#pragma once

#include <string>
#include <vector>

namespace cs::gpu::variants::fp32fast {

// ---- simt-gemm (simt_gemm.cu) -------------------------------------------------------------------

// Block BM x BN x BK; warps of 64 x WN (lanes 8 x 4), so a thread owns 8 x (WN/4): rows
// ty*4 + {0..3} + {0, 32}, columns tx*4 + {0..3} + 16*h (h < WN/16).
template <int BM, int BN, int WN, int BK_ = 8>
struct SimtTile {
    static constexpr int BK = BK_, WM = 64, NSTAGE = 3;
    static constexpr int NWM = BM / WM, NWN = BN / WN, NT = NWM * NWN * 32;
    static constexpr int TN = WN / 4;  // columns per thread: 8 or 16
    static constexpr int AST = BK * BM, BST = BK * BN;  // floats per stage
    static constexpr int SMEM = NSTAGE * (AST + BST) * 4;
    // Blocks per SM the register budget allows: 8x8 threads fit 128 registers, 8x16 ~255.
    static constexpr int MINB_RAW = (WN == 32 ? 512 : 256) / NT;
    static constexpr int MINB = MINB_RAW < 1 ? 1 : (MINB_RAW > 8 ? 8 : MINB_RAW);
    static_assert(WN == 32 || WN == 64, "8x8 or 8x16 per thread");
};

// The tiles simt-gemm can run (the axis `tile`), in the order of simt_gemm_enqueue's switch.
struct SimtCfgInfo {
    int bm, bn, wn, bk, nt, minb, smem;
    const char* what;
};
#define FF_SIMT_CFG(BM, BN, WN, BK, WHAT) \
    {BM, BN, WN, BK, SimtTile<BM, BN, WN, BK>::NT, SimtTile<BM, BN, WN, BK>::MINB, SimtTile<BM, BN, WN, BK>::SMEM, WHAT}
inline const SimtCfgInfo kSimtCfgs[] = {
    FF_SIMT_CFG(128, 128, 64, 8, "128x128x8 block, 4 warps of 64x64, 8x16 per thread"),
    FF_SIMT_CFG(128, 64, 64, 8, "128x64x8 block, 2 warps of 64x64, 8x16 per thread"),
    FF_SIMT_CFG(128, 64, 32, 8, "128x64x8 block, 4 warps of 64x32, 8x8 per thread"),
    FF_SIMT_CFG(64, 64, 32, 8, "64x64x8 block, 2 warps of 64x32, 8x8 per thread"),
    FF_SIMT_CFG(128, 64, 32, 16, "128x64x16 block, 4 warps of 64x32, 8x8 per thread"),
};
#undef FF_SIMT_CFG
inline constexpr int kSimtNumCfgs = 5;
inline constexpr int kSimtDefaultCfg = 4;
inline constexpr int kSimtBK = 16;  // K is padded to a multiple of every tile's BK
inline constexpr int kSimtMaxBM = 128;

// A tile's axis value: "<block BMxBNxBK>-<outputs per thread>", from kSimtCfgs' description.
inline std::string simt_tile_name(int cfg) {
    const std::string what = kSimtCfgs[cfg].what;
    const auto per = what.rfind(" per thread");
    const auto from = what.rfind(' ', per - 1) + 1;
    return what.substr(0, what.find(' ')) + "-" + what.substr(from, per - from);
}

// The K parts a row may ask for (the axis "split": at most S equal parts; unset: choose_split's rule).
inline const std::vector<std::string> kSimtSplits = {"1", "2", "3", "4", "8", "16"};
inline const std::vector<int> kSimtSplitParts = {1, 2, 3, 4, 8, 16};  // the split axis's ids: the same counts

// ---- split-tf32 and tf32-mma-1x (split_tf32.cu) -------------------------------------------------

// Block 128 (m) x 128 (p) x 16 (k), 8 warps of 64 x 32, 3 stages; SPLIT: the A stages hold hi and lo.
template <bool SPLIT>
struct TcTile {
    static constexpr int BM = 128, BN = 128, BK = 16, NSTAGE = 3;
    static constexpr int WM = 64, WN = 32, NWM = 2, NWN = 4, NT = 256;
    static constexpr int H = SPLIT ? 2 : 1;  // A parts stored: hi (and lo)
    static constexpr int LDB = BN + 8;
    static constexpr int AST = BK * BM * H, BST = BK * LDB;  // floats per stage
    static constexpr int SMEM = NSTAGE * (AST + BST) * 4;
};

// ---- fused Winograd on the FMA pipes (winograd_fused.cuh) ---------------------------------------

// MT: output tile (2, 3 or 4); R: filter size (3 or 5; WinoCfg is the 3x3 form); BM x BN: filters x tiles per block; TPX: threads per position
// (32, 16 or 8: a warp holds 32 / TPX positions); BC: channels per pipeline stage; TWO_PASS:
// the input transform's form (see transform() in wino_fused_kernel); PADU,
// PADV: row padding of the U and V tiles so that the positions sharing a warp read distinct
// banks (TPX 16: rows 16 floats apart mod 32; TPX 8, BN 16: 8 apart).
// When NX * TPX is not a whole number of warps (F(3x3,5x5): 49 positions x 8), the block is
// rounded up to NXP positions: the threads of the NXP - NX extra ones load and transform but
// own no GEMM tile, and the loads that do not divide evenly over the threads are guarded
// (RAW_EXACT, U_EXACT false). For every F(m,3x3) configuration NXP = NX and both are exact.
template <int MT_, int R_, int BM_, int BN_, int TPX_, int BC_, bool TWO_PASS_ = true, int PADU_ = (TPX_ == 32 ? 0 : 16),
          int PADV_ = (TPX_ == 32 ? 0 : (TPX_ == 16 ? 16 : 8))>
struct WinoCfgR {
    static constexpr int MT = MT_, R = R_, BM = BM_, BN = BN_, TPX = TPX_, BC = BC_;
    static constexpr int A = MT + R - 1, NX = A * A;
    static constexpr int NXP = (NX * TPX + 31) / 32 * 32 / TPX, NT = NXP * TPX;
    static constexpr int GM = BM / 8, GN = BN / 8;  // thread grid of one position's GEMM
    static_assert(GM * GN == TPX, "one 8x8 register tile per thread");
    static_assert(TPX == 32 || TPX == 16 || TPX == 8, "a warp holds one, two or four positions");
    static_assert(NT % 32 == 0 && NXP * TPX == NT, "whole warps");
    static_assert(NT <= 1024, "at most 1024 threads per block");
    static constexpr int LDU = BM + PADU_;
    static constexpr int LDV = BN + PADV_;
    static_assert(LDU % 4 == 0 && LDV % 4 == 0, "float4 rows");
    // Registers: 64K per SM in 4 quarters, a block's warps spread over them: the cap is
    // 16384 / (32 * ceil(warps / 4)), rounded down to 8 (512 threads: 128; 576: 96; 288: 168).
    static constexpr int US = BC * NX * LDU;  // floats per U stage (two stages)
    static constexpr int RS = BC * NX * BN;   // raw windows (one buffer)
    static constexpr int VS = BC * NX * LDV;  // transformed tiles (one buffer)
    static constexpr int LDM = BN + 4;        // epilogue rows
    static constexpr int MAIN = 2 * US + RS + VS;
    static constexpr int EPI = NX * BM * LDM;
    static constexpr int SMEM = (MAIN > EPI ? MAIN : EPI) * 4;
    static constexpr bool RAW_EXACT = (NX * BN) % NT == 0;  // whole (position, tile) pairs per thread
    static constexpr int RPT = (NX * BN + NT - 1) / NT;
    static constexpr bool U_EXACT = (BC * NX * BM / 4) % NT == 0;  // whole 16-byte U pieces per thread
    static_assert((BC * NX * BM) % 4 == 0, "U chunk in 16-byte pieces");
    static constexpr int UPT = (BC * NX * BM / 4 + NT - 1) / NT;
    static constexpr bool TWO_PASS = TWO_PASS_;  // see transform() in wino_fused_kernel
    static_assert(TWO_PASS || BC * BN <= NT, "one thread per (channel, tile) in the input transform");
};

// The 3x3 configurations (winograd_f2x2_3x3.cu, winograd_f4x4_3x3.cu, the dev tests).
template <int MT_, int BM_, int BN_, int TPX_, int BC_, bool TWO_PASS_ = true, int PADU_ = (TPX_ == 32 ? 0 : 16),
          int PADV_ = (TPX_ == 32 ? 0 : (TPX_ == 16 ? 16 : 8))>
using WinoCfg = WinoCfgR<MT_, 3, BM_, BN_, TPX_, BC_, TWO_PASS_, PADU_, PADV_>;

// The rungs' blocks (each file says why its tile): winograd-f2x2 (winograd_f2x2_3x3.cu),
// winograd-f4x4 (winograd_f4x4_3x3.cu; the plan picks WinoF4 or WinoF4W, wino_use_wide),
// winograd-f2x2-5x5 (winograd_f2x2_5x5.cu; WinoF25 or WinoF25W, wino_use_wide), winograd-f3x3-5x5
// (winograd_f3x3_5x5.cu). supports() checks the narrow block, which every device that takes the
// wide one takes too (wino_use_wide falls back to the narrow one where the wide one does not fit).
using WinoF2 = WinoCfg<2, 64, 32, 32, 8, false>;
using WinoF4 = WinoCfg<4, 32, 16, 8, 8>;          // 288 threads, 165 registers, 153 KiB
using WinoF4W = WinoCfg<4, 32, 32, 16, 8>;        // 576 threads, 96 registers (cap), 198 KiB
using WinoF25 = WinoCfgR<2, 5, 32, 16, 8, 8>;     // 288 threads, 153 KiB
using WinoF25W = WinoCfgR<2, 5, 32, 32, 16, 8>;   // 576 threads, 96 registers (cap), 198 KiB
using WinoF35 = WinoCfgR<3, 5, 32, 16, 8, 8>;     // 416 threads (52 positions, 49 used), 208 KiB

// ---- Winograd with the products as 3xFP16 on the tensor cores (winograd_3xfp16.cuh) -------------

template <int MT_, int R_, int BM_ = 64>
struct WtcCfg {
    static constexpr int MT = MT_, R = R_, A = MT + R - 1, NX = A * A;
    static constexpr int BT = 64, BM = BM_;    // tiles x filters per block
    static constexpr int CH = 32;              // channels per pipeline stage (hi and lo: 64 halves)
    static constexpr float LO = 2048.0f;             // 2^11: low parts' storage scale
    static constexpr int kInLog2 = 7, kWLog2 = 13;   // the range scale's targets (see the top of winograd_3xfp16.cuh)
};

// The main kernels' geometry (the kernels and their launch glue: WtcMmaSync in
// winograd_3xfp16.cu, WtcWgmma in winograd_wgmma.cu, WtcWgmmaWs in
// winograd_wgmma_ws.cu).
// mma.sync m16n8k16 from ldmatrix fragments, 4-stage cp.async:
template <class Cfg>
struct WtcMmaSyncTile {
    static constexpr int WT = 32, WM = 16;  // tiles x filters per warp
    static constexpr int NW = (Cfg::BT / WT) * (Cfg::BM / WM), NT = 32 * NW;
    static constexpr int LDS = 2 * Cfg::CH + 8;  // shared row, halves (144 B: 16 B apart mod 128)
    static constexpr int STAGES = 4;
    static constexpr int STAGE = (Cfg::BT + Cfg::BM) * LDS;  // halves
    static constexpr int SMEM = STAGES * STAGE * 2;
    static constexpr int MI = WT / 16, NI = WM / 8;  // m16 and n8 MMA tiles per warp
};
// wgmma, one warpgroup, 2 blocks per SM, TMA:
template <class Cfg>
struct WtcWgmmaTile {
    static constexpr int NT = 128;     // one warpgroup
    static constexpr int WN = Cfg::BM;  // its filters (wgmma n)
    static constexpr int CTAS = 2;      // per SM (2 x 128 threads x <= 255 registers)
    static constexpr int G = 3;         // chunks of 32 channels per stage (conv2: a whole position)
    static constexpr int STAGES = 3;    // 3 x 36 KiB: 2 blocks fit an SM's 227 KiB (G = 1 with 8
                                        // stages of 12 KiB measured slower on conv2; see winograd_wgmma.cu)
    static constexpr int SMEM = STAGES * G * (Cfg::BT + Cfg::BM) * 128 + STAGES * 8 + 1024;  // + barriers, alignment
};
// wgmma warp-specialised: an MMA warpgroup issuing TMA and FW fold warpgroups, 1 block per SM:
template <class Cfg>
struct WtcWgmmaWsTile {
    static constexpr int FW = 2;                    // fold warpgroups (32 filters each)
    static constexpr int NT = 128 * (1 + FW);       // + the MMA warpgroup
    // setmaxnreg moves registers within the block's allocation (384 x 168 at launch): 136 + 2 x 184
    // = 3 x 168. (112 + 2 x 200 hung the first run: the fold warpgroups' increase waited forever.)
    static constexpr int MMA_REGS = 136, FOLD_REGS = 184;
    static_assert(MMA_REGS + FW * FOLD_REGS <= (1 + FW) * 168, "setmaxnreg beyond the launch allocation never returns");
    static constexpr int G = 3;                     // chunks of 32 channels per stage (conv2: a whole position)
    static constexpr int STAGES = 3;                // 3 x 48 KiB
    static constexpr int SMEM = STAGES * G * (Cfg::BT + Cfg::BM) * 128 + 2 * 128 * (Cfg::BM / 2) * 4 +
                                8 * (STAGES + 4) + 1024;  // + barriers, alignment
};

// The rungs' configurations: winograd-3xfp16-f3x3-5x5 (64 tiles x 64 filters on mma.sync),
// winograd-3xfp16-wgmma-f3x3-5x5 (64 x 32) and winograd-3xfp16-wgmma-ws-f3x3-5x5 (64 x 64).
using WtcF35 = WtcCfg<3, 5>;
using WtcF35W = WtcCfg<3, 5, 32>;
using WtcF35Ws = WtcCfg<3, 5, 64>;

}  // namespace cs::gpu::variants::fp32fast
