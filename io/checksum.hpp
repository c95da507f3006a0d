// SHA-256 checksums (OpenSSL EVP) as lowercase hex strings, for the golden-file manifest.
// Streaming: feed a Sha256 piece by piece (e.g. while writing a file), or hash a buffer or
// a whole file in one call.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

namespace cs {

class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(Sha256&&) noexcept;
    Sha256& operator=(Sha256&&) noexcept;
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;

    void update(const void* data, std::size_t size);
    // Finishes the hash and returns its 64 hex digits; the object then starts over.
    std::string hex_digest();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// SHA-256 of a memory buffer.
std::string sha256_hex(const void* data, std::size_t size);
// SHA-256 of a file's bytes, read in large blocks. Throws cs::Error naming the file.
std::string sha256_file(const std::filesystem::path& path);

}  // namespace cs
