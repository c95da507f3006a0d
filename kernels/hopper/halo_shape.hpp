// The halo mainloop's shape (halo_conv.cu, hopper-halo-{fp16,bf16}): its limits (filters,
// channel planes, taps, halo rows), its shared-memory budget and each schedule's tile
// (HaloShape). Plain C++: the rung's supports() (supports.cpp) checks a layer against these
// limits in every build, and the kernel is laid out by them.
#pragma once

#include "halo_raw.hpp"
#include "names.hpp"

namespace cs::gpu::variants::hopper {

constexpr int kHBN = 96;                         // filters: all of them (resident weights)
constexpr int kHChunks = 6;                      // 16-byte channel planes per pixel at most
constexpr int kHTaps = 9;                        // filter taps R' S' at most (3x3 after space-to-depth)
constexpr int kHExtra = 128;                     // halo rows past a tile's own: (R'-1) W' + S' - 1 at most
constexpr int kHRing = 72 * 1024;                // the halo ring: 2 stages of 36 KiB or 3 of 24 KiB
constexpr int kHBTap = kHBN * 16;                // one (plane, tap) block of the weights: 96 filters
constexpr int kHB = kHTaps * kHChunks * kHBTap;  // 81 KiB
constexpr int kHEpiPitch = kHBN * 2 + 16;        // a staged output row (the pad spreads the banks)
constexpr int kHEpiRows = 128 * kHEpiPitch;
constexpr int kHEpi = kHEpiRows + 128 * 8;       // one consumer warpgroup's staged rows + their output offsets
constexpr int kHSmem = 128 + kHB + kHRing + 2 * kHEpi + 16 * 8;
static_assert(kHSmem <= 227 * 1024, "the halo kernel's shared memory");
// s2d=loader: the halo's raw NHWC run by bulk copies into two buffers in turn (halo_raw.hpp:
// the next tile's run lands while this one's is gathered), gathered into the planes (2 stages)
// by a fourth warpgroup; the gather's channel table beside them. One staging buffer for both
// consumer warpgroups (they stage alternate tiles) makes room for the second run buffer.
// s2d=loader-ring3: one run buffer (a run's load and its gather in series) and the third ring
// stage its shared memory frees (the gathered halos up to two tiles ahead of the consumers).
constexpr int kHRaw = kHRawBox * kHRawBoxes * 2;  // 32 KiB of 2-byte elements
constexpr int kHTable = 640;  // the channels' TabEntry, 32 bytes of zeros, 128-byte padded
constexpr int kHZeros = kHChunks * 8 * int(sizeof(TabEntry));  // the zero words: where a run outside the image reads
static_assert(kHZeros + 32 <= kHTable, "the table and its zero words");

// The schedule's geometry. Cooperative: tiles of 256 rows, both consumer warpgroups on each
// (128 rows apiece), a stage per tile (384 halo rows: two 192-row boxes per plane), 2 stages.
// Ping-pong: tiles of 128 rows, the warpgroups on alternate tiles (one stages its tile while
// the other multiplies), 256 halo rows (one box per plane), 3 stages.
template <bool kPP, bool kRaw = false, int kRawBufs = 2>
struct HaloShape {
    static constexpr int kBM = kPP ? 128 : 256;       // GEMM rows (grid positions) per tile
    static constexpr int kBox = kPP ? 256 : 192;      // halo rows per TMA box
    static constexpr int kBoxes = kPP ? 1 : 2;        // boxes per plane
    static constexpr int kPlane = kBox * kBoxes * 16;  // one plane of a stage's halo
    static constexpr int kStage = kHChunks * kPlane;
    static constexpr int kStages = !kRaw ? kHRing / kStage : kRawBufs == 2 ? 2 : 3;
    static constexpr int kRing = kStages * kStage;
    static constexpr int kEpiBufs = kRaw ? 1 : 2;  // staging buffers: one a consumer warpgroup, or one shared
    static constexpr int kSmem = 128 + kHB + kRing + (kRaw ? kRawBufs * kHRaw + kHTable : 0) + kEpiBufs * kHEpi + 16 * 8;
    static_assert(!kRaw || kRawBufs == 1 || kRawBufs == 2, "one or two raw-run buffers");
    static_assert(!kRaw || kPP, "the raw loader runs the ping-pong schedule (a 256-row halo's run fits kHRaw)");
    static_assert(kSmem <= 227 * 1024, "the halo kernel's shared memory");
    static_assert(kBox * kBoxes >= kBM + kHExtra, "the halo holds a tile and its extra rows");
    static_assert(kStages * kStage <= kHRing && kStages <= 3, "the ring");
    static_assert(kPlane % 128 == 0 && kHBTap % 128 == 0 && kBox * 16 % 128 == 0, "TMA destinations 128-byte aligned");
};

// The halo rung's axes (family.cpp) as typed values with their spellings.
// schedule: consumer warpgroups on each 256-row tile, or on alternate 128-row tiles; automatic:
// ping-pong but for NCHW output past one wave of tiles.
enum class HaloSchedule { automatic, cooperative, pingpong };
inline constexpr NameTable<HaloSchedule, 3> kHaloScheduleNames{{{HaloSchedule::automatic, "auto"},
                                                                {HaloSchedule::cooperative, "cooperative"},
                                                                {HaloSchedule::pingpong, "pingpong"}}};
// launch: the GEMM as the input transform's programmatic dependent, or after it.
enum class HaloLaunch { pdl, plain };
inline constexpr NameTable<HaloLaunch, 2> kHaloLaunchNames{{{HaloLaunch::pdl, "pdl"}, {HaloLaunch::plain, "plain"}}};
// s2d: the space-to-depth rewrite as a copy before the GEMM, or in the GEMM's loader (two raw-run
// buffers and two ring stages, or one and three, or two and two with two gatherer warpgroups).
enum class HaloS2d { copy, loader, loader_ring3, loader_wide };
inline constexpr NameTable<HaloS2d, 4> kHaloS2dNames{{{HaloS2d::copy, "copy"},
                                                      {HaloS2d::loader, "loader"},
                                                      {HaloS2d::loader_ring3, "loader-ring3"},
                                                      {HaloS2d::loader_wide, "loader-wide"}}};

}  // namespace cs::gpu::variants::hopper
