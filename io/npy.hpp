// NumPy .npy files (format 1.0; versions 2.0 and 3.0 are read too): a float32 ("<f4",
// C order) writer and a strict reader, plus half precision ("<f2") kept as raw uint16 bits.
//
// The reader checks the magic, the version, the header dict (descr, fortran_order False,
// shape), the header length and that the file holds exactly header + prod(shape)*itemsize
// bytes. Every problem is a cs::Error that starts with the file name and says what is wrong,
// e.g. "x.npy: truncated: expected 4096 bytes of data, found 100".
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cs {

using NpyShape = std::vector<std::int64_t>;

// "(1, 3, 227, 227)", "(5,)", "()": the Python spelling used in headers and messages.
std::string npy_shape_string(const NpyShape& shape);
// Product of the dimensions (1 for a 0-d array). Throws cs::Error on overflow/negatives.
std::int64_t npy_element_count(const NpyShape& shape);

// The bytes before the data: magic, version 1.0, header length and the header dict,
// padded with spaces and a newline so the data starts at a multiple of 64 bytes.
std::string npy_header_bytes(std::string_view descr, const NpyShape& shape);

struct NpyHeader {
    std::string descr;            // "<f4"
    bool fortran_order = false;
    NpyShape shape;
    int major_version = 1;
    std::uint64_t data_offset = 0;  // bytes before the data
    std::uint64_t itemsize = 0;     // from descr
    std::uint64_t file_bytes = 0;   // the file's size, checked to be data_offset + data bytes
    std::int64_t count() const { return npy_element_count(shape); }
};

struct NpyWritten {
    std::uint64_t bytes = 0;  // whole file
    std::string sha256;       // of the whole file, hex
};

// Writes atomically (see atomic_file.hpp) and returns the file's size and SHA-256.
// `data` holds prod(shape) elements. Throws cs::Error naming the path.
NpyWritten write_npy(const std::filesystem::path& path, const float* data, const NpyShape& shape);
NpyWritten write_npy_f16(const std::filesystem::path& path, const std::uint16_t* bits, const NpyShape& shape);

// Reads and checks the header and the file size; the data is not read.
NpyHeader read_npy_header(const std::filesystem::path& path);

template <typename T>
struct NpyArray {
    NpyShape shape;
    std::vector<T> data;
};

// Reads a whole "<f4" / "<f2" file. When expected_shape is given the header's shape must
// equal it. When sha256 is not null it receives the SHA-256 of the whole file (computed
// from the bytes read, so the file is read once).
NpyArray<float> read_npy_f32(const std::filesystem::path& path, const std::optional<NpyShape>& expected_shape = {},
                             std::string* sha256 = nullptr);
NpyArray<std::uint16_t> read_npy_f16(const std::filesystem::path& path,
                                     const std::optional<NpyShape>& expected_shape = {}, std::string* sha256 = nullptr);

}  // namespace cs
