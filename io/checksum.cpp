#include "checksum.hpp"

#include "error.hpp"

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

namespace cs {

namespace {

[[noreturn]] void openssl_failure(const char* what) {
    // Not something a user can fix, but report it the same way rather than abort.
    throw Error(std::string("OpenSSL SHA-256 failed in ") + what);
}

}  // namespace

struct Sha256::Impl {
    EVP_MD_CTX* ctx = nullptr;
    Impl() {
        ctx = EVP_MD_CTX_new();
        if (!ctx) openssl_failure("EVP_MD_CTX_new");
        start();
    }
    ~Impl() { EVP_MD_CTX_free(ctx); }
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;
    void start() {
        if (EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) != 1) openssl_failure("EVP_DigestInit_ex");
    }
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(const void* data, std::size_t size) {
    if (size == 0) return;
    if (EVP_DigestUpdate(impl_->ctx, data, size) != 1) openssl_failure("EVP_DigestUpdate");
}

std::string Sha256::hex_digest() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(impl_->ctx, md, &len) != 1) openssl_failure("EVP_DigestFinal_ex");
    static const char digits[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(2 * len);
    for (unsigned int i = 0; i < len; ++i) {
        hex.push_back(digits[md[i] >> 4]);
        hex.push_back(digits[md[i] & 15]);
    }
    impl_->start();
    return hex;
}

std::string sha256_hex(const void* data, std::size_t size) {
    Sha256 h;
    h.update(data, size);
    return h.hex_digest();
}

std::string sha256_file(const std::filesystem::path& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw Error(path.string() + ": cannot open for reading (" + std::strerror(errno) + ")");
    Sha256 h;
    std::vector<char> buf(std::size_t(4) << 20);
    while (f) {
        f.read(buf.data(), std::streamsize(buf.size()));
        h.update(buf.data(), std::size_t(f.gcount()));
    }
    if (f.bad()) throw Error(path.string() + ": read error while computing its SHA-256");
    return h.hex_digest();
}

}  // namespace cs
