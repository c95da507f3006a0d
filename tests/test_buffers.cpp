// Pageable host buffers (bench/buffers.hpp, MemKind::pageable): no CUDA call, so the CPU build
// tests them whole: 2 MiB-aligned blocks (what transparent huge pages need), writable end to
// end, owned once (a move empties the source), nothing allocated for zero bytes.
#include "catch.hpp"

#include "buffers.hpp"

#include <cstdint>
#include <cstring>
#include <utility>

using cs::gpu::Buffer;
using cs::gpu::kHugePage;
using cs::gpu::MemKind;

TEST_CASE("pageable buffers are huge-page aligned, writable and owned once", "[buffers]") {
    const std::size_t sizes[] = {4, kHugePage - 4, kHugePage, kHugePage + 4, 3 * kHugePage + 12};
    for (std::size_t bytes : sizes) {
        Buffer b(MemKind::pageable, bytes);
        REQUIRE(b.get() != nullptr);
        CHECK(b.bytes() == bytes);
        CHECK(b.kind() == MemKind::pageable);
        CHECK(reinterpret_cast<std::uintptr_t>(b.get()) % kHugePage == 0);
        std::memset(b.get(), 0x5a, bytes);  // every byte asked for is ours
        CHECK(b.as<unsigned char>()[bytes - 1] == 0x5a);

        void* p = b.get();
        Buffer moved(std::move(b));
        CHECK(moved.get() == p);
        CHECK(moved.bytes() == bytes);
        CHECK(b.get() == nullptr);
        CHECK(b.bytes() == 0);
        Buffer assigned;
        assigned = std::move(moved);
        CHECK(assigned.get() == p);
        CHECK(moved.get() == nullptr);
    }
    Buffer empty(MemKind::pageable, 0);
    CHECK(empty.get() == nullptr);
    CHECK(empty.bytes() == 0);
}
