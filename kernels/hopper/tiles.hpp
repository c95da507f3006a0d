// The Hopper family's CTA tiles: one table for every rung (the `tile` axis). A tile is
// BM rows (output pixels: 128, or 64 / 256 in the persistent cooperative kernel) x BN filters x one k-slice of ROWB bytes (a 128 B or 64 B
// swizzled shared-memory row: 64 / 32 halves or 32 / 16 floats), STAGES pipeline stages,
// MINB CTAs per SM. A rung instantiates the tiles it can run (tile_fits); the others are
// refused at plan time with the reason. Adding a tile is one line here.
//
// Name: m<BM>n<BN>k<ROWB>B-s<STAGES>[-x<MINB>][-mma<KB>], e.g. m128n256k64B-s8 (conv2's default).
#pragma once

#include <string>
#include <utility>

namespace cs::gpu::variants::hopper {

struct Tile {
    int bn;         // filters per CTA (wgmma n)
    int rowb;       // bytes of K per shared-memory row: 128 or 64
    int stages;     // pipeline depth
    int minb;       // CTAs per SM the launch bounds ask for
    int bm = 128;   // output pixels per CTA: 128, or 256 / 64 (the persistent cooperative kernel
                    // only, CoopShape in ws_kernel.cuh: each consumer warpgroup 128 rows as two
                    // m64 wgmmas sharing each B read / all 64 rows over half the filters: the
                    // few tiles of N=1 in more, shorter pieces)
    int kb = 0;     // bytes of a slice the MMAs cover (0: all ROWB; the persistent cooperative kernel
                    // only): a layer of one slice per tap whose C channels fill kb bytes skips the
                    // MMAs of the zero tail (conv1's C' = 48 halves: 3 of 4 k-steps)
    constexpr int mma_bytes() const { return kb ? kb : rowb; }
    // filters of one consumer warpgroup's accumulator in the cooperative schedule: half the
    // tile's on 64 pixels, all of them otherwise (CoopShape in ws_kernel.cuh; the plan's
    // TMA-store check reads it too)
    static constexpr int wg_filters(int bm, int bn) { return bm < 128 ? bn / 2 : bn; }
    constexpr int wg_filters() const { return wg_filters(bm, bn); }
};

inline constexpr Tile kTiles[] = {
    {96, 128, 7, 1},  {128, 128, 6, 1}, {128, 128, 3, 2}, {192, 128, 5, 1}, {256, 128, 4, 1}, {96, 64, 8, 1},
    {128, 64, 8, 1},  {128, 64, 6, 2},  {192, 64, 8, 1},  {256, 64, 8, 1},  {96, 128, 3, 2},
    {128, 128, 4, 1, 256}, {96, 128, 4, 1, 256}, {96, 128, 7, 1, 128, 96}, {96, 128, 4, 1, 256, 96},
    {128, 128, 4, 1, 256, 96}, {128, 64, 8, 1, 256},
    {128, 128, 8, 1, 64}, {192, 128, 6, 1, 64}, {256, 128, 4, 1, 64}, {128, 64, 8, 1, 64},
    {64, 128, 8, 1},  {64, 128, 8, 1, 64}, {128, 128, 3, 1, 64}, {64, 128, 3, 1, 64},
};
inline constexpr int kNumTiles = int(sizeof(kTiles) / sizeof(kTiles[0]));

inline std::string tile_name(int i) {
    const Tile& t = kTiles[i];
    return "m" + std::to_string(t.bm) + "n" + std::to_string(t.bn) + "k" + std::to_string(t.rowb) + "B-s" +
           std::to_string(t.stages) +
           (t.minb > 1 ? "-x" + std::to_string(t.minb) : "") + (t.kb ? "-mma" + std::to_string(t.kb) : "");
}
inline int tile_index(const std::string& name) {
    for (int i = 0; i < kNumTiles; ++i)
        if (tile_name(i) == name) return i;
    return -1;
}
// A human description: "128x256x32 (halves), 8 stages, 1 CTA/SM" for element size es.
inline std::string tile_text(int i, int es) {
    const Tile& t = kTiles[i];
    return std::to_string(t.bm) + "x" + std::to_string(t.bn) + "x" + std::to_string(t.rowb / es) + ", " +
           std::to_string(t.stages) +
           " stages, " + std::to_string(t.minb) + " CTA" + (t.minb > 1 ? "s" : "") + "/SM";
}

// The table's tile of BN filters, ROWB-byte slices and MINB CTAs per SM with the stage count
// nearest `stages`; 0 (the first tile) when the table has none of that shape.
inline int find_tile(int bn, int rowb, int minb, int stages) {
    int best = -1;
    for (int i = 0; i < kNumTiles; ++i) {
        const Tile& t = kTiles[i];
        if (t.bn != bn || t.rowb != rowb || t.minb != minb || t.bm != 128 || t.kb) continue;
        const int d = t.stages > stages ? t.stages - stages : stages - t.stages;
        const int bd = best < 0 ? 0 : (kTiles[best].stages > stages ? kTiles[best].stages - stages : stages - kTiles[best].stages);
        if (best < 0 || d < bd) best = i;
    }
    return best < 0 ? 0 : best;
}


// Calls f(std::integral_constant<int, I>{}) for the tile index i (a runtime value), with the
// tile as a compile-time constant: the one dispatch from a tile name to its kernel.
template <class F, int... I>
void with_tile_impl(int i, F&& f, std::integer_sequence<int, I...>) {
    ((i == I ? (f(std::integral_constant<int, I>{}), 0) : 0), ...);
}
template <class F>
void with_tile(int i, F&& f) {
    with_tile_impl(i, std::forward<F>(f), std::make_integer_sequence<int, kNumTiles>{});
}

}  // namespace cs::gpu::variants::hopper
