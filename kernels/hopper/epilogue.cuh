// Epilogues of the persistent Hopper kernels (the `epilogue` axis): how a consumer
// warpgroup's 64 x BN fp32 accumulator tile reaches the output.
//   EpiDirect    registers -> global memory, straight from the fragment (store_tile in
//                hopper_store.cuh): NHWC pairs of adjacent filters, NCHW single elements. The
//                warpgroup waits for its stores' issue, and every 4-byte store touches its
//                own 32-byte sector.
//   EpiTmaStore  registers -> shared memory (128 B-swizzled 64-row subtiles, two buffers per
//                warpgroup) -> TMA bulk tensor store (NHWC: the output is the row-major P x M
//                matrix). One thread issues each subtile's store and the warpgroup goes on to
//                its next tile's mainloop while the copy engine drains it: only the wait for
//                a buffer's previous store (bulk wait_group.read) can stall, two subtiles
//                later. Rows >= P and columns >= M are clipped by the tensor map.
// Both take rows [p0, p0 + 64) and filters [m0, m0 + BN) of thread t (0..127) of the
// warpgroup that owns staging slot `slot`.
#pragma once

#include "pipeline.cuh"

namespace cs::gpu::variants::hopper {

template <class TO>
struct EpiArgs {
    TO* out;
    const CUtensorMap* tm_out;  // EpiTmaStore's map over the NHWC output
    ConvGeom g;
    bool nchw;
    std::uint32_t stage_smem;   // EpiTmaStore's staging buffers (1024-aligned)
    OutOps<TO> ops;             // the split variants' scale, the fused bias and ReLU (hopper_store.cuh)
};

struct EpiDirect {
    static constexpr int kSmemBytes = 0;
    static constexpr const char* kName = "direct";
    template <class TO, int BN, int kDown>
    __device__ __forceinline__ static void store(float (&acc)[BN / 2], const EpiArgs<TO>& a, int p0, int m0, int,
                                                 int t, int&) {
        store_tile<TO, BN, kDown>(acc, a.out, a.g, p0, m0, a.nchw, t, a.ops);
    }
    __device__ __forceinline__ static void drain(int) {}
};

__device__ __forceinline__ void st_shared_pair(std::uint32_t addr, __half2 v) {
    CS_HOPPER_ASM("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(*reinterpret_cast<std::uint32_t*>(&v)) : "memory");
}
__device__ __forceinline__ void st_shared_pair(std::uint32_t addr, __nv_bfloat162 v) {
    CS_HOPPER_ASM("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(*reinterpret_cast<std::uint32_t*>(&v)) : "memory");
}
__device__ __forceinline__ void st_shared_pair(std::uint32_t addr, float2 v) {
    CS_HOPPER_ASM("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(v.x), "f"(v.y) : "memory");
}

struct EpiTmaStore {
    static constexpr int kSubBytes = 64 * 128;                 // one 64-row subtile of 128 B rows
    static constexpr int kSmemBytes = 2 * 2 * kSubBytes;       // 2 warpgroups x 2 buffers
    static constexpr const char* kName = "tma-store";
    template <class TO, int BN, int kDown>
    __device__ __forceinline__ static void store(float (&acc)[BN / 2], const EpiArgs<TO>& a, int p0, int m0,
                                                 int slot, int t, int& nsub) {
        constexpr int CW = 128 / int(sizeof(TO));  // filters per subtile (64 halves, 32 floats)
        if constexpr (BN % CW != 0) {
            // Not whole subtiles (BN = 96 halves): the plan never pairs such a tile with this
            // epilogue (ws_epilogue_reason); the direct store keeps the instantiation sound.
            store_tile<TO, BN, kDown>(acc, a.out, a.g, p0, m0, a.nchw, t, a.ops);
            return;
        } else {
        if constexpr (kDown > 0) {  // 2^-kDown, then the split's scale (exact: powers of two)
            constexpr float down = 1.0f / float(1 << kDown);
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) acc[i] *= down;
        }
        a.ops.scale(acc);
        const int lane = t & 31, warp = t >> 5;
        a.ops.template apply<BN>(acc, m0 + 2 * (lane & 3));
#pragma unroll
        for (int sub = 0; sub < BN / CW; ++sub) {
            const std::uint32_t buf =
                a.stage_smem + std::uint32_t(slot) * 2u * kSubBytes + std::uint32_t(nsub & 1) * kSubBytes;
            if (t == 0) bulk_wait_read<1>();  // the store that last used this buffer has read it
            named_sync(1 + slot, 128);
#pragma unroll
            for (int jj = 0; jj < CW / 8; ++jj) {
                const int j = sub * (CW / 8) + jj;
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    const int row = warp * 16 + (lane >> 2) + 8 * i;
                    const int bytes = (8 * jj + 2 * (lane & 3)) * int(sizeof(TO));
                    const std::uint32_t addr =
                        buf + std::uint32_t(row * 128 + ((((bytes >> 4) ^ (row & 7))) << 4) + (bytes & 15));
                    st_shared_pair(addr, Elem<TO>::pair(acc[4 * j + 2 * i], acc[4 * j + 2 * i + 1]));
                }
            }
            fence_proxy_async_smem();
            named_sync(1 + slot, 128);
            if (t == 0) {
                tma_store_2d(a.tm_out, buf, m0 + sub * CW, p0);
                bulk_commit();
            }
            ++nsub;
        }
        }
    }
    // Before the CTA exits: its last stores have completed.
    __device__ __forceinline__ static void drain(int t) {
        if (t == 0) bulk_wait<0>();
    }
};

}  // namespace cs::gpu::variants::hopper
