// libFuzzer target for the .npy reader (io/npy.cpp): the input is a whole .npy file.
// io/npy.hpp reads from a path only, so each input is written to a scratch file first.
// Checked: no crash or hang, every rejection a cs::Error, and for an accepted file the
// header's sizes add up to the file's, the data has prod(shape) elements, the SHA-256
// is the file's, and writing the array back and reading it gives the same bits.
#include "fuzz_common.hpp"

#include "checksum.hpp"
#include "npy.hpp"

#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

namespace {

std::filesystem::path g_dir, g_in, g_out;

template <typename T>
void check_array(const cs::NpyArray<T>& a, const std::string& sha, const uint8_t* data, size_t size,
                 const char* descr) {
    FUZZ_ASSERT(std::uint64_t(a.data.size()) == std::uint64_t(cs::npy_element_count(a.shape)));
    FUZZ_ASSERT(sha == cs::sha256_hex(data, size));
    try {
        const cs::NpyHeader h = cs::read_npy_header(g_in);
        FUZZ_ASSERT(h.descr == descr);
        FUZZ_ASSERT(!h.fortran_order);
        FUZZ_ASSERT(h.shape == a.shape);
        FUZZ_ASSERT(h.data_offset + a.data.size() * sizeof(T) == size);
    } catch (const std::exception& e) {
        fuzz::bug(std::string("read_npy_header refuses a file the array reader accepted: ") + e.what());
    }
    // Round trip through the writer: same shape, same bits.
    cs::NpyWritten w;
    try {
        if constexpr (sizeof(T) == 4)
            w = cs::write_npy(g_out, a.data.data(), a.shape);
        else
            w = cs::write_npy_f16(g_out, a.data.data(), a.shape);
    } catch (const cs::Error&) {
        return;  // e.g. so many dimensions that the header does not fit a version 1.0 header
    }
    std::string sha2;
    cs::NpyArray<T> b;
    try {
        if constexpr (sizeof(T) == 4)
            b = cs::read_npy_f32(g_out, a.shape, &sha2);
        else
            b = cs::read_npy_f16(g_out, a.shape, &sha2);
    } catch (const std::exception& e) {
        fuzz::bug(std::string("cannot read back what the writer wrote: ") + e.what());
    }
    FUZZ_ASSERT(sha2 == w.sha256);
    FUZZ_ASSERT(b.data.size() == a.data.size());
    FUZZ_ASSERT(a.data.empty() || std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(T)) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    g_dir = fuzz::scratch_dir("fuzz-npy");
    g_in = g_dir / "in.npy";
    g_out = g_dir / "out.npy";
    static fuzz::ScratchCleanup cleanup{g_dir};
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz::write_bytes(g_in, data, size);

    fuzz::accepts([&] {
        const cs::NpyHeader h = cs::read_npy_header(g_in);
        // The header's arithmetic must describe this file exactly, without overflow.
        const std::uint64_t count = std::uint64_t(h.count());
        FUZZ_ASSERT(h.itemsize > 0);
        FUZZ_ASSERT(count <= std::numeric_limits<std::uint64_t>::max() / h.itemsize);
        FUZZ_ASSERT(h.data_offset <= size);
        FUZZ_ASSERT(h.file_bytes == size);
        FUZZ_ASSERT(h.data_offset + count * h.itemsize == size);
        FUZZ_ASSERT(h.major_version >= 1 && h.major_version <= 3);
    });

    std::string sha;
    cs::NpyArray<float> f32;
    if (fuzz::accepts([&] { f32 = cs::read_npy_f32(g_in, std::nullopt, &sha); }))
        check_array(f32, sha, data, size, "<f4");
    cs::NpyArray<std::uint16_t> f16;
    if (fuzz::accepts([&] { f16 = cs::read_npy_f16(g_in, std::nullopt, &sha); }))
        check_array(f16, sha, data, size, "<f2");

    // With an expected shape (the golden loader's use), and without a hash.
    fuzz::accepts([&] { (void)cs::read_npy_f32(g_in, cs::NpyShape{1, 3, 5}); });
    fuzz::accepts([&] { (void)cs::read_npy_f16(g_in, cs::NpyShape{2, 2}); });
    return 0;
}
