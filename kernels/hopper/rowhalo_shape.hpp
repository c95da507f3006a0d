// The row-halo mainloop's shape (rowhalo_conv.cu, hopper-rowhalo-{fp16,bf16,tf32}): its limits, its
// shared-memory budget per row width, and how a layer's output rows are cut into bands over
// the SMs. Plain C++: the rung's supports() (supports.cpp) checks a layer against these limits
// in every build, tests/test_rowhalo.cpp checks the bands, and the kernel is laid out by them.
#pragma once

#include "names.hpp"

#include <cstdint>
#include <optional>

namespace cs::gpu::variants::hopper {

constexpr int kRhFilters = 64;   // M: the MMA's 64 rows are the filters (the weights resident)
constexpr int kRhChannels = 64;  // C: the k-steps unrolled
constexpr int kRhPlanes = 8;     // 16-byte channel planes per pixel of 2-byte channels (operands=planes)
constexpr int kRhR = 3, kRhS = 3;  // the taps, unrolled
constexpr int kRhSlots = kRhR + 1;  // input rows in the ring: R in use, one loading
constexpr int kRhMaxPad = 2;        // padding past it would leave a whole tap in the zero fill
constexpr int kRhAtomBytes = 128;   // a 128B-swizzle atom's row: a pixel's channels, or a part of them
constexpr int kRhStepBytes = 32;    // a wgmma's K: 32 bytes of channels (16 of 2 bytes, 8 of tf32)
// A pixel's channels in 128-byte atom rows: one of 2-byte channels, two of tf32's 4-byte ones.
constexpr int rh_atoms(int es) { return kRhChannels * es / kRhAtomBytes; }

// The MMA's N. 2-byte operands: one output row rounded up to the widths with a kernel
// (wgmma_ops_rows.cuh), 0 past the widest. tf32 (es = 4): segments of 56 pixels, as many as the
// row needs: the resident weights take twice the room (144 KiB), which leaves shared memory for
// a ring of 64-pixel slots only.
constexpr int kRhMaxWidth = 224;
constexpr int kRhTf32Width = 56;
constexpr int rh_width(int F, int es = 2) {
    return F > kRhMaxWidth ? 0 : es == 4 ? kRhTf32Width : F <= 56 ? 56 : F <= 112 ? 112 : kRhMaxWidth;
}
// The row's segments of rh_width pixels (1 for 2-byte operands).
constexpr int rh_segments(int F, int es = 2) {
    const int kn = rh_width(F, es);
    return kn == 0 ? 0 : (F + kn - 1) / kn;
}

constexpr int kRhPlaneBytes = 16;  // a pixel's 8 channels of one plane
// An input row's slot: the segment's kn + S - 1 pixels, rounded up to whole 8-row swizzle atoms
// (128-byte planes), every channel.
constexpr int rh_slot_pixels(int kn) { return kn + 8; }
constexpr int rh_slot_bytes(int kn, int es = 2) { return rh_slot_pixels(kn) * kRhChannels * es; }
// The weights, all resident: (tap, atom) blocks of 64 filters x 128 bytes (swizzled) or (plane,
// tap) blocks of 64 filters x 16 bytes: 72 KiB of 2-byte channels, 144 of tf32.
constexpr int rh_weight_bytes(int es) { return kRhChannels * kRhR * kRhS * kRhFilters * es; }

template <int kN, int kEs = 2>
struct RowHaloShape {
    static constexpr int kAtoms = rh_atoms(kEs);
    static constexpr int kPix = rh_slot_pixels(kN);
    static constexpr int kPlane = kPix * kRhPlaneBytes;   // planes: one 8-channel plane of the slot
    static constexpr int kAtomSlot = kPix * kRhAtomBytes;  // swizzled: one atom's channels of the slot
    static constexpr int kSlot = rh_slot_bytes(kN, kEs);   // one input row's segment, every channel
    static constexpr int kWeights = rh_weight_bytes(kEs);
    static constexpr int kStageAtom = kN * kRhAtomBytes;   // the staged output row: an atom's filters
    static constexpr int kStage = kAtoms * kStageAtom;     // one output row, 128B swizzle
    static constexpr int kBars = 128;
    static constexpr int kSmem = 1024 + kStage + kWeights + kRhSlots * kSlot + kBars;
    static_assert(kSmem <= 227 * 1024, "the row-halo kernel's shared memory");
    static_assert(kStageAtom % 1024 == 0 && kWeights % 1024 == 0 && kAtomSlot % 1024 == 0 && kPlane % 128 == 0,
                  "the staging's swizzle atoms and the TMA destinations stay aligned");
    static_assert(kPix - kN >= kRhS - 1 && kPix <= 256, "a slot holds the row's taps and is one TMA box wide");
};

// A layer's N x E output rows as bands of consecutive rows of one image, one band (of one row
// segment, `segs` to a row) a CTA at a time (a band loads its R - 1 extra input rows once): the
// band count per image that gives the shortest last wave over `sms` CTAs, a band's fill (its
// first R rows' loads before its first MMA) counted as half a row; ties go to fewer, longer bands.
struct RowBands {
    int per_band = 0;  // output rows per band (the last band of an image may have fewer)
    int bands = 0;     // bands per image
    int units = 0;     // N x bands x segs
    int grid = 0;      // CTAs: min(units, sms)
};
constexpr RowBands row_bands(int N, int E, int sms, int segs = 1) {
    RowBands best{};
    double best_cost = 0;
    for (int b = 1; b <= E; ++b) {
        const int per = (E + b - 1) / b;
        const int bands = (E + per - 1) / per;  // b, or fewer where b does not divide evenly
        const std::int64_t units = std::int64_t(N) * bands * segs;
        const std::int64_t waves = (units + sms - 1) / sms;
        const double cost = double(waves) * (per + 0.5);
        if (best.bands == 0 || cost < best_cost) {
            best_cost = cost;
            best.per_band = per;
            best.bands = bands;
            best.units = int(units);
            best.grid = int(units < sms ? units : sms);
        }
    }
    return best;
}

// The `operands` axis: the slots and the weights as 128-byte pixel rows in the 128B-swizzled
// layout (the default: a TMA box row a pixel; the shifted B operand starts inside a swizzle
// atom), or as 8-channel planes of 16-byte rows (no swizzle; eight times the box rows).
enum class RowHaloOperands { swizzled, planes };
inline constexpr NameTable<RowHaloOperands, 2> kRowHaloOperandNames{
    {{RowHaloOperands::swizzled, "swizzled"}, {RowHaloOperands::planes, "planes"}}};
// What a row runs for the axis value it set (the plan and the cost model alike): the default
// where it set none.
constexpr RowHaloOperands rh_operands(std::optional<RowHaloOperands> set) {
    return set.value_or(RowHaloOperands::swizzled);
}

}  // namespace cs::gpu::variants::hopper
