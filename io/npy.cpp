#include "npy.hpp"

#include "atomic_file.hpp"
#include "checksum.hpp"
#include "error.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>

namespace cs {

static_assert(std::endian::native == std::endian::little, "the .npy code assumes a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";  // 6 bytes
constexpr std::size_t kMagicLen = 6;
constexpr std::uint64_t kMaxHeaderLen = std::uint64_t(1) << 20;
constexpr std::size_t kChunkBytes = std::size_t(16) << 20;  // hash/write/read granularity

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
    throw Error(path.string() + ": " + what);
}

// A tiny parser for the Python literal dict in a .npy header, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 5), }
class HeaderParser {
public:
    HeaderParser(const std::filesystem::path& path, std::string_view text) : path_(path), s_(text) {}

    void parse(NpyHeader& h) {
        bool have_descr = false, have_fortran = false, have_shape = false;
        ws();
        expect('{');
        for (;;) {
            ws();
            if (peek() == '}') {
                ++i_;
                break;
            }
            const std::string key = string_literal("a key");
            ws();
            expect(':');
            ws();
            if (key == "descr") {
                if (peek() != '\'' && peek() != '"') bad("'descr' must be a simple dtype string such as '<f4'");
                h.descr = string_literal("'descr'");
                have_descr = true;
            } else if (key == "fortran_order") {
                h.fortran_order = boolean();
                have_fortran = true;
            } else if (key == "shape") {
                h.shape = tuple();
                have_shape = true;
            } else {
                bad("unexpected key '" + key + "' (a .npy header has exactly 'descr', 'fortran_order' and 'shape')");
            }
            ws();
            if (peek() == ',') {
                ++i_;
                continue;
            }
            ws();
            if (peek() == '}') {
                ++i_;
                break;
            }
            bad("expected ',' or '}' at offset " + std::to_string(i_));
        }
        ws();
        if (i_ != s_.size()) bad("unexpected text after the dict");
        if (!have_descr) bad("missing key 'descr'");
        if (!have_fortran) bad("missing key 'fortran_order'");
        if (!have_shape) bad("missing key 'shape'");
    }

private:
    [[noreturn]] void bad(const std::string& what) const { fail(path_, "bad .npy header: " + what); }
    char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
    void ws() {
        while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    void expect(char c) {
        if (peek() != c) bad(std::string("expected '") + c + "' at offset " + std::to_string(i_));
        ++i_;
    }
    std::string string_literal(const char* what) {
        const char q = peek();
        if (q != '\'' && q != '"') bad(std::string("expected a quoted string for ") + what);
        ++i_;
        std::string out;
        while (i_ < s_.size() && s_[i_] != q) {
            if (s_[i_] == '\\') bad("escapes in strings are not supported");
            out.push_back(s_[i_++]);
        }
        if (i_ >= s_.size()) bad("unterminated string");
        ++i_;
        return out;
    }
    bool boolean() {
        if (s_.substr(i_, 4) == "True") {
            i_ += 4;
            return true;
        }
        if (s_.substr(i_, 5) == "False") {
            i_ += 5;
            return false;
        }
        bad("'fortran_order' must be True or False");
    }
    NpyShape tuple() {
        expect('(');
        NpyShape shape;
        bool need_comma_for_single = true;
        for (;;) {
            ws();
            if (peek() == ')') {
                ++i_;
                break;
            }
            if (!std::isdigit(static_cast<unsigned char>(peek()))) bad("'shape' must be a tuple of non-negative integers");
            std::int64_t v = 0;
            while (std::isdigit(static_cast<unsigned char>(peek()))) {
                const int digit = peek() - '0';
                if (v > (std::numeric_limits<std::int64_t>::max() - digit) / 10) bad("a dimension in 'shape' is too large");
                v = v * 10 + digit;
                ++i_;
            }
            if (peek() == 'L') ++i_;  // Python 2 longs
            shape.push_back(v);
            ws();
            if (peek() == ',') {
                ++i_;
                need_comma_for_single = false;
                continue;
            }
            ws();
            if (peek() != ')') bad("expected ',' or ')' in 'shape'");
            ++i_;
            if (shape.size() == 1 && need_comma_for_single) bad("'shape' (n) is not a tuple; a 1-d shape is written (n,)");
            break;
        }
        return shape;
    }

    const std::filesystem::path& path_;
    std::string_view s_;
    std::size_t i_ = 0;
};

std::uint64_t itemsize_of(const std::filesystem::path& path, const std::string& descr) {
    // Simple dtypes only: a byte-order character, a kind letter and a size in bytes.
    if (descr.size() >= 3 && std::strchr("<>|=", descr[0]) && std::isalpha(static_cast<unsigned char>(descr[1]))) {
        std::uint64_t n = 0;
        for (std::size_t i = 2; i < descr.size(); ++i) {
            if (!std::isdigit(static_cast<unsigned char>(descr[i]))) fail(path, "unsupported dtype " + descr);
            n = n * 10 + std::uint64_t(descr[i] - '0');
            if (n > 1024) fail(path, "unsupported dtype " + descr);
        }
        if (n > 0) return n;
    }
    fail(path, "unsupported dtype " + descr);
}

struct RawHeader {
    NpyHeader h;
    std::string preamble;  // every byte before the data, for hashing
};

// Parses magic, version and header; does not check the file size.
RawHeader parse_header(const std::filesystem::path& path, std::ifstream& f) {
    RawHeader r;
    char fixed[12];
    f.read(fixed, 8);
    if (f.gcount() < 8 || std::memcmp(fixed, kMagic, kMagicLen) != 0)
        fail(path, "not a .npy file (the magic string \\x93NUMPY is missing)");
    const int major = static_cast<unsigned char>(fixed[6]);
    const int minor = static_cast<unsigned char>(fixed[7]);
    if ((major != 1 && major != 2 && major != 3) || minor != 0)
        fail(path, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                       " (1.0, 2.0 and 3.0 are read)");
    std::uint64_t header_len = 0;
    std::size_t fixed_len = 0;
    if (major == 1) {
        f.read(fixed + 8, 2);
        if (f.gcount() < 2) fail(path, "truncated in the .npy header");
        header_len = std::uint64_t(static_cast<unsigned char>(fixed[8])) |
                     std::uint64_t(static_cast<unsigned char>(fixed[9])) << 8;
        fixed_len = 10;
    } else {
        f.read(fixed + 8, 4);
        if (f.gcount() < 4) fail(path, "truncated in the .npy header");
        for (int i = 0; i < 4; ++i) header_len |= std::uint64_t(static_cast<unsigned char>(fixed[8 + i])) << (8 * i);
        fixed_len = 12;
    }
    if (header_len > kMaxHeaderLen)
        fail(path, "bad .npy header: header length " + std::to_string(header_len) + " is implausibly large");
    std::string text(header_len, '\0');
    f.read(text.data(), std::streamsize(header_len));
    if (std::uint64_t(f.gcount()) != header_len)
        fail(path, "truncated in the .npy header (header length " + std::to_string(header_len) + ", found " +
                       std::to_string(f.gcount()) + " bytes)");
    if (text.empty() || text.back() != '\n') fail(path, "bad .npy header: it does not end with a newline");
    HeaderParser(path, text).parse(r.h);
    r.h.major_version = major;
    r.h.data_offset = fixed_len + header_len;
    r.h.itemsize = itemsize_of(path, r.h.descr);
    (void)npy_element_count(r.h.shape);  // overflow check
    r.preamble.assign(fixed, fixed_len);
    r.preamble += text;
    return r;
}

std::uint64_t file_size_of(const std::filesystem::path& path) {
    std::error_code ec;
    const auto n = std::filesystem::file_size(path, ec);
    if (ec) fail(path, "cannot read its size (" + ec.message() + ")");
    return n;
}

void check_size(const std::filesystem::path& path, NpyHeader& h) {
    h.file_bytes = file_size_of(path);
    const auto count = std::uint64_t(h.count());
    // count * itemsize could wrap around 2^64 (itemsize is up to 1024) and match a short file.
    if (count > std::numeric_limits<std::uint64_t>::max() / h.itemsize)
        fail(path, "shape " + npy_shape_string(h.shape) + " of " + h.descr + " has too many elements");
    const std::uint64_t want = count * h.itemsize;
    const std::uint64_t have = h.file_bytes - std::min(h.file_bytes, h.data_offset);
    if (have < want)
        fail(path, "truncated: expected " + std::to_string(want) + " bytes of data, found " + std::to_string(have));
    if (have > want)
        fail(path, "too long: expected " + std::to_string(want) + " bytes of data, found " + std::to_string(have) +
                       " (" + std::to_string(have - want) + " trailing bytes)");
}

std::ifstream open_for_reading(const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) fail(path, "file does not exist");
    if (std::filesystem::is_directory(path, ec)) fail(path, "is a directory, not a .npy file");
    std::ifstream f(path, std::ios::binary);
    if (!f) fail(path, std::string("cannot open for reading (") + std::strerror(errno) + ")");
    return f;
}

template <typename T>
NpyArray<T> read_typed(const std::filesystem::path& path, const char* descr,
                       const std::optional<NpyShape>& expected_shape, std::string* sha256) {
    auto f = open_for_reading(path);
    RawHeader r = parse_header(path, f);
    NpyHeader& h = r.h;
    if (h.descr != descr) fail(path, "dtype " + h.descr + ", expected " + descr);
    if (h.fortran_order) fail(path, "fortran_order is True; only C order is supported");
    if (expected_shape && h.shape != *expected_shape)
        fail(path, "shape " + npy_shape_string(h.shape) + ", expected " + npy_shape_string(*expected_shape));
    check_size(path, h);

    NpyArray<T> out;
    out.shape = h.shape;
    out.data.resize(std::size_t(h.count()));
    Sha256 hash;
    if (sha256) hash.update(r.preamble.data(), r.preamble.size());
    char* dst = reinterpret_cast<char*>(out.data.data());
    const std::size_t total = out.data.size() * sizeof(T);
    for (std::size_t off = 0; off < total;) {
        const std::size_t n = std::min(kChunkBytes, total - off);
        f.read(dst + off, std::streamsize(n));
        if (std::size_t(f.gcount()) != n)
            fail(path, "read error: expected " + std::to_string(total) + " bytes of data, could read " +
                           std::to_string(off + std::size_t(f.gcount())));
        if (sha256) hash.update(dst + off, n);
        off += n;
    }
    if (sha256) *sha256 = hash.hex_digest();
    return out;
}

NpyWritten write_raw(const std::filesystem::path& path, const char* descr, const void* data, std::size_t elem_bytes,
                     const NpyShape& shape) {
    const std::string header = npy_header_bytes(descr, shape);
    const std::size_t data_bytes = std::size_t(npy_element_count(shape)) * elem_bytes;
    Sha256 hash;
    hash.update(header.data(), header.size());
    write_file_atomic(path, [&](std::ostream& os) {
        os.write(header.data(), std::streamsize(header.size()));
        const char* p = static_cast<const char*>(data);
        for (std::size_t off = 0; off < data_bytes && os;) {
            const std::size_t n = std::min(kChunkBytes, data_bytes - off);
            hash.update(p + off, n);  // hashed while still in cache
            os.write(p + off, std::streamsize(n));
            off += n;
        }
    });
    return NpyWritten{header.size() + data_bytes, hash.hex_digest()};
}

}  // namespace

std::string npy_shape_string(const NpyShape& shape) {
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    if (shape.size() == 1) s += ",";
    return s + ")";
}

std::int64_t npy_element_count(const NpyShape& shape) {
    std::int64_t n = 1;
    for (auto d : shape) {
        if (d < 0) throw Error("negative dimension in shape " + npy_shape_string(shape));
        if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / 16 / d)
            throw Error("shape " + npy_shape_string(shape) + " has too many elements");
        n *= d;
    }
    return n;
}

std::string npy_header_bytes(std::string_view descr, const NpyShape& shape) {
    std::string dict = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " +
                       npy_shape_string(shape) + ", }";
    const std::size_t unpadded = kMagicLen + 2 + 2 + dict.size() + 1;
    const std::size_t padded = (unpadded + 63) / 64 * 64;
    dict.append(padded - unpadded, ' ');
    dict.push_back('\n');
    if (dict.size() > 65535) throw Error("shape " + npy_shape_string(shape) + " is too long for a .npy 1.0 header");
    std::string out(kMagic, kMagicLen);
    out.push_back('\x01');
    out.push_back('\x00');
    out.push_back(char(dict.size() & 0xff));
    out.push_back(char(dict.size() >> 8));
    return out + dict;
}

NpyWritten write_npy(const std::filesystem::path& path, const float* data, const NpyShape& shape) {
    return write_raw(path, "<f4", data, sizeof(float), shape);
}

NpyWritten write_npy_f16(const std::filesystem::path& path, const std::uint16_t* bits, const NpyShape& shape) {
    return write_raw(path, "<f2", bits, sizeof(std::uint16_t), shape);
}

NpyHeader read_npy_header(const std::filesystem::path& path) {
    auto f = open_for_reading(path);
    RawHeader r = parse_header(path, f);
    check_size(path, r.h);
    return r.h;
}

NpyArray<float> read_npy_f32(const std::filesystem::path& path, const std::optional<NpyShape>& expected_shape,
                             std::string* sha256) {
    return read_typed<float>(path, "<f4", expected_shape, sha256);
}

NpyArray<std::uint16_t> read_npy_f16(const std::filesystem::path& path, const std::optional<NpyShape>& expected_shape,
                                     std::string* sha256) {
    return read_typed<std::uint16_t>(path, "<f2", expected_shape, sha256);
}

}  // namespace cs
