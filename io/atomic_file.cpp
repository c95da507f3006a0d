#include "atomic_file.hpp"

#include "error.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <streambuf>
#include <string>
#include <vector>

namespace cs {

namespace {

std::optional<std::uint64_t> g_fault_after;  // test hook, see testing::set_atomic_write_fault

std::string errno_text(int err) { return std::strerror(err); }

std::string random_suffix() {
    static std::mt19937_64 rng{std::random_device{}() ^ (std::uint64_t(::getpid()) << 32)};
    char buf[17];
    std::snprintf(buf, sizeof buf, "%08x", unsigned(rng() & 0xffffffffu));
    return buf;
}

// A streambuf over a file descriptor: a 1 MiB buffer, writes of a buffer's size or more go
// straight to write(2). Remembers the first errno so the error can be reported.
class FdOutBuf : public std::streambuf {
public:
    static constexpr std::size_t kBufferBytes = std::size_t(1) << 20;

    explicit FdOutBuf(int fd) : fd_(fd), buf_(kBufferBytes) { setp(buf_.data(), buf_.data() + buf_.size()); }

    int error() const { return err_; }
    std::uint64_t written() const { return written_; }

protected:
    int_type overflow(int_type ch) override {
        if (!flush_buffer()) return traits_type::eof();
        if (!traits_type::eq_int_type(ch, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(ch);
            pbump(1);
        }
        return traits_type::not_eof(ch);
    }

    std::streamsize xsputn(const char* s, std::streamsize n) override {
        const auto room = std::streamsize(epptr() - pptr());
        if (n <= room) {
            std::memcpy(pptr(), s, std::size_t(n));
            pbump(int(n));
            return n;
        }
        if (!flush_buffer()) return 0;
        if (n >= std::streamsize(buf_.size())) return write_all(s, std::size_t(n)) ? n : 0;
        std::memcpy(pptr(), s, std::size_t(n));
        pbump(int(n));
        return n;
    }

    int sync() override { return flush_buffer() ? 0 : -1; }

private:
    bool flush_buffer() {
        const auto n = std::size_t(pptr() - pbase());
        if (n == 0) return err_ == 0;
        const bool ok = write_all(pbase(), n);
        setp(buf_.data(), buf_.data() + buf_.size());
        return ok;
    }

    bool write_all(const char* p, std::size_t n) {
        if (err_) return false;
        if (g_fault_after) {
            const std::uint64_t limit = *g_fault_after;
            if (written_ + n > limit) {
                const std::size_t part = limit > written_ ? std::size_t(limit - written_) : 0;
                write_all_real(p, part);
                if (!err_) err_ = ENOSPC;
                return false;
            }
        }
        return write_all_real(p, n);
    }

    bool write_all_real(const char* p, std::size_t n) {
        while (n > 0) {
            const ssize_t r = ::write(fd_, p, std::min<std::size_t>(n, std::size_t(1) << 30));
            if (r < 0) {
                if (errno == EINTR) continue;
                err_ = errno;
                return false;
            }
            p += r;
            n -= std::size_t(r);
            written_ += std::uint64_t(r);
        }
        return true;
    }

    int fd_;
    std::vector<char> buf_;
    int err_ = 0;
    std::uint64_t written_ = 0;
};

void fsync_directory(const std::filesystem::path& dir) {
    // Makes the rename durable; best effort (some filesystems refuse fsync on directories).
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return;
    (void)::fsync(dfd);
    ::close(dfd);
}

}  // namespace

struct AtomicFile::Impl {
    std::filesystem::path target, temp, dir;
    int fd = -1;
    std::unique_ptr<FdOutBuf> buf;
    std::unique_ptr<std::ostream> os;
    bool done = false;  // committed or discarded
};

AtomicFile::AtomicFile(std::filesystem::path target) : impl_(std::make_unique<Impl>()) {
    auto& d = *impl_;
    d.target = std::move(target);
    if (d.target.empty() || !d.target.has_filename())
        throw Error("cannot write '" + d.target.string() + "': not a file name");
    d.dir = d.target.parent_path();
    const std::filesystem::path dir_for_checks = d.dir.empty() ? std::filesystem::path(".") : d.dir;
    std::error_code ec;
    const auto st = std::filesystem::status(dir_for_checks, ec);
    if (!std::filesystem::exists(st))
        throw Error("cannot write " + d.target.string() + ": directory " + dir_for_checks.string() + " does not exist");
    if (!std::filesystem::is_directory(st))
        throw Error("cannot write " + d.target.string() + ": " + dir_for_checks.string() + " is not a directory");
    if (std::filesystem::is_directory(d.target, ec))
        throw Error("cannot write " + d.target.string() + ": it is a directory");

    // Keep the mode of a file being replaced; new files get 0666 minus the umask.
    mode_t mode = 0666;
    struct stat old {};
    const bool replacing = ::stat(d.target.c_str(), &old) == 0;
    if (replacing) mode = old.st_mode & 07777;

    const std::string base = d.target.string() + ".tmp." + std::to_string(::getpid()) + ".";
    for (int attempt = 0; attempt < 16 && d.fd < 0; ++attempt) {
        d.temp = base + random_suffix();
        d.fd = ::open(d.temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (d.fd < 0 && errno != EEXIST) break;
    }
    if (d.fd < 0) {
        const int err = errno;
        if (err == EACCES || err == EPERM || err == EROFS)
            throw Error("cannot write " + d.target.string() + ": directory " + dir_for_checks.string() +
                        " is not writable (" + errno_text(err) + ")");
        throw Error("cannot write " + d.target.string() + ": cannot create a temporary file in " +
                    dir_for_checks.string() + " (" + errno_text(err) + ")");
    }
    if (replacing) (void)::fchmod(d.fd, mode);
    d.buf = std::make_unique<FdOutBuf>(d.fd);
    d.os = std::make_unique<std::ostream>(d.buf.get());
}

AtomicFile::~AtomicFile() { discard(); }

std::ostream& AtomicFile::stream() { return *impl_->os; }

const std::filesystem::path& AtomicFile::target() const { return impl_->target; }
const std::filesystem::path& AtomicFile::temp_path() const { return impl_->temp; }
std::uint64_t AtomicFile::bytes_written() const { return impl_->buf ? impl_->buf->written() : 0; }

void AtomicFile::discard() noexcept {
    auto& d = *impl_;
    if (d.done) return;
    d.done = true;
    if (d.fd >= 0) {
        ::close(d.fd);
        d.fd = -1;
    }
    if (!d.temp.empty()) ::unlink(d.temp.c_str());
}

void AtomicFile::commit() {
    auto& d = *impl_;
    if (d.done) throw Error("cannot write " + d.target.string() + ": the atomic write was already finished");
    auto fail = [&](const std::string& what, int err) {
        discard();
        throw Error("cannot write " + d.target.string() + ": " + what + (err ? " (" + errno_text(err) + ")" : ""));
    };
    d.os->flush();
    if (d.buf->error()) fail("write failed", d.buf->error());
    if (!*d.os) fail("write failed", 0);
    if (::fsync(d.fd) != 0) fail("fsync failed", errno);
    const int fd = d.fd;
    d.fd = -1;
    if (::close(fd) != 0) fail("close failed", errno);
    if (::rename(d.temp.c_str(), d.target.c_str()) != 0) fail("rename of " + d.temp.string() + " failed", errno);
    d.done = true;
    fsync_directory(d.dir.empty() ? std::filesystem::path(".") : d.dir);
}

void write_file_atomic(const std::filesystem::path& path, const std::function<void(std::ostream&)>& writer) {
    AtomicFile f(path);  // the destructor removes the temporary if anything below throws
    writer(f.stream());
    f.commit();
}

void write_file_atomic(const std::filesystem::path& path, std::string_view content) {
    write_file_atomic(path, [&](std::ostream& os) { os.write(content.data(), std::streamsize(content.size())); });
}

namespace testing {
void set_atomic_write_fault(std::optional<std::uint64_t> fail_after_bytes) { g_fault_after = fail_after_bytes; }
}  // namespace testing

}  // namespace cs
