// .npy files: round trips, numpy reading ours and us reading numpy's, strict refusals,
// and the SHA-256 helper.
#include "catch.hpp"
#include "test_util.hpp"

#include "checksum.hpp"
#include "error.hpp"
#include "npy.hpp"
#include "shell_quote.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#ifndef CS_PYTHON
#define CS_PYTHON "/usr/bin/python3"
#endif

namespace fs = std::filesystem;

using cs::test::TempDir;
using cs::test::slurp;
using cs::test::spit;
using cs::shell_quote;
using cs::test::error_message;

namespace {

std::vector<float> values(std::int64_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = d(rng);
    return v;
}

struct RunResult {
    int status = -1;
    std::string output;
};

// Runs Debian's python (CS_PYTHON) isolated (-I: no user site, no cwd on sys.path).
RunResult run_python(const std::string& script, const std::vector<std::string>& args) {
    std::string cmd = shell_quote(CS_PYTHON) + " -I -c " + shell_quote(script);
    for (const auto& a : args) cmd += " " + shell_quote(a);
    cmd += " 2>&1";
    RunResult r;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
    const int st = ::pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

// FAILS (never skips) when python or numpy is missing.
void require_numpy() {
    const std::string py = CS_PYTHON;
    INFO("python: " << py);
    if (py.empty() || py.find("NOTFOUND") != std::string::npos || ::access(py.c_str(), X_OK) != 0)
        FAIL("python3 was not found (CS_PYTHON='" << py << "'): apt-get install python3-numpy");
    const auto r = run_python("import numpy; print(numpy.__version__)", {});
    if (r.status != 0)
        FAIL(py << " cannot import numpy (" << r.output << "): apt-get install python3-numpy");
}

}  // namespace

TEST_CASE("npy round trip keeps shape and every bit", "[npy]") {
    TempDir dir;
    const std::vector<cs::NpyShape> shapes = {{}, {0}, {1}, {7}, {3, 5}, {2, 3, 4, 5}, {1, 3, 5, 1}, {2, 1, 1, 1, 3}};
    unsigned seed = 1;
    for (const auto& shape : shapes) {
        INFO("shape " << cs::npy_shape_string(shape));
        const auto v = values(cs::npy_element_count(shape), seed++);
        const fs::path p = dir.path / "a.npy";
        const auto w = cs::write_npy(p, v.data(), shape);
        CHECK(w.bytes == fs::file_size(p));
        CHECK(w.sha256 == cs::sha256_file(p));
        const auto h = cs::read_npy_header(p);
        CHECK(h.data_offset % 64 == 0);
        CHECK(h.descr == "<f4");
        CHECK(h.shape == shape);
        std::string sha;
        const auto a = cs::read_npy_f32(p, shape, &sha);
        CHECK(sha == w.sha256);
        REQUIRE(a.shape == shape);
        REQUIRE(a.data.size() == v.size());
        if (!v.empty()) CHECK(std::memcmp(a.data.data(), v.data(), v.size() * sizeof(float)) == 0);
    }
}

TEST_CASE("npy half precision round trip as raw bits", "[npy]") {
    TempDir dir;
    std::vector<std::uint16_t> bits = {0x0000, 0x3c00, 0xbc00, 0x7bff, 0x8001, 0x7c00};
    const fs::path p = dir.path / "h.npy";
    cs::write_npy_f16(p, bits.data(), {2, 3});
    const auto a = cs::read_npy_f16(p, cs::NpyShape{2, 3});
    CHECK(a.data == bits);
    CHECK_HAS(error_message([&] { cs::read_npy_f32(p); }), "dtype <f2, expected <f4");
}

TEST_CASE("numpy reads our files and we read numpy's", "[npy][python]") {
    require_numpy();
    TempDir dir;
    // Ours -> numpy: values i*0.25 - 3 are exact in float32.
    const cs::NpyShape shape4{2, 3, 4, 5};
    std::vector<float> v(120);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(i) * 0.25f - 3.f;
    cs::write_npy(dir.path / "ours4.npy", v.data(), shape4);
    cs::write_npy(dir.path / "ours1.npy", v.data(), {7});
    std::vector<std::uint16_t> h = {0x3c00, 0xc000, 0x3800};  // 1, -2, 0.5
    cs::write_npy_f16(dir.path / "ours_h.npy", h.data(), {3});
    const std::string check = R"PY(
import sys, numpy as np
d = sys.argv[1]
a = np.load(d + "/ours4.npy")
assert a.dtype == np.dtype("<f4"), a.dtype
assert a.shape == (2, 3, 4, 5), a.shape
assert a.flags["C_CONTIGUOUS"]
assert np.array_equal(a, (np.arange(120, dtype=np.float32) * 0.25 - 3).reshape(2, 3, 4, 5))
b = np.load(d + "/ours1.npy")
assert b.shape == (7,) and np.array_equal(b, np.arange(7, dtype=np.float32) * 0.25 - 3)
c = np.load(d + "/ours_h.npy")
assert c.dtype == np.dtype("<f2") and list(c) == [1.0, -2.0, 0.5]
np.save(d + "/np4.npy", (np.arange(60, dtype=np.float32) / 8 - 2).reshape(1, 3, 4, 5))
np.save(d + "/np1.npy", np.array([1.5, -2.25, 3.0], dtype="<f4"))
np.save(d + "/np0.npy", np.float32(42.5))
np.save(d + "/np_f8.npy", np.zeros((2, 2), dtype="<f8"))
np.save(d + "/np_fortran.npy", np.asfortranarray(np.zeros((2, 3), dtype="<f4")))
np.save(d + "/np_h.npy", np.array([1.0, -2.0, 0.5], dtype="<f2"))
print("ok")
)PY";
    const auto r = run_python(check, {dir.path.string()});
    INFO(r.output);
    REQUIRE(r.status == 0);

    const auto a = cs::read_npy_f32(dir.path / "np4.npy", cs::NpyShape{1, 3, 4, 5});
    for (std::size_t i = 0; i < 60; ++i) CHECK(a.data[i] == float(i) / 8 - 2);
    const auto b = cs::read_npy_f32(dir.path / "np1.npy");
    CHECK(b.shape == cs::NpyShape{3});
    CHECK(b.data == std::vector<float>{1.5f, -2.25f, 3.0f});
    const auto c = cs::read_npy_f32(dir.path / "np0.npy");
    CHECK(c.shape.empty());
    CHECK(c.data == std::vector<float>{42.5f});
    const auto hh = cs::read_npy_f16(dir.path / "np_h.npy");
    CHECK(hh.data == h);
    CHECK_HAS(error_message([&] { cs::read_npy_f32(dir.path / "np_f8.npy"); }), "dtype <f8, expected <f4");
    CHECK_HAS(error_message([&] { cs::read_npy_f32(dir.path / "np_fortran.npy"); }), "fortran_order");
}

TEST_CASE("npy reader accepts header variants", "[npy]") {
    TempDir dir;
    const fs::path p = dir.path / "v.npy";
    const float data[3] = {1.f, 2.f, 3.f};
    auto make = [&](int major, const std::string& dict) {
        std::string hdr = dict + "\n";
        std::string out = std::string("\x93NUMPY", 6) + char(major) + '\0';
        const std::size_t len = hdr.size();
        out += char(len & 0xff);
        out += char((len >> 8) & 0xff);
        if (major >= 2) out += std::string(2, '\0');
        out += hdr;
        out.append(reinterpret_cast<const char*>(data), sizeof data);
        spit(p, out);
    };
    make(1, R"({"shape": (3,), "fortran_order": False, "descr": "<f4"})");
    CHECK(cs::read_npy_f32(p, cs::NpyShape{3}).data == std::vector<float>{1, 2, 3});
    make(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (3L,), }   ");
    CHECK(cs::read_npy_f32(p).shape == cs::NpyShape{3});
    make(1, "{'descr':'<f4','fortran_order':False,'shape':(1,3)}");
    CHECK(cs::read_npy_f32(p).shape == (cs::NpyShape{1, 3}));
}

TEST_CASE("npy reader refuses bad files with the file name and the reason", "[npy]") {
    TempDir dir;
    const fs::path p = dir.path / "bad.npy";
    const auto v = values(15, 3);
    cs::write_npy(p, v.data(), {1, 3, 5});
    const std::string good = slurp(p);
    const std::size_t header = cs::npy_header_bytes("<f4", {1, 3, 5}).size();
    auto msg_of = [&](const std::string& bytes, std::optional<cs::NpyShape> shape = std::nullopt) {
        spit(p, bytes);
        return error_message([&] { cs::read_npy_f32(p, shape); });
    };
    auto replace = [&](std::string s, const std::string& from, const std::string& to) {
        const auto pos = s.find(from);
        REQUIRE(pos != std::string::npos);
        s.replace(pos, from.size(), to);
        return s;
    };

    std::string m = msg_of(good.substr(0, good.size() - 8));
    CHECK_HAS(m, p.string());
    CHECK_HAS(m, "truncated: expected 60 bytes of data, found 52");
    m = msg_of(good + "xx");
    CHECK_HAS(m, "expected 60 bytes of data, found 62");
    m = msg_of(good, cs::NpyShape{1, 3, 227, 227});
    CHECK_HAS(m, p.string());
    CHECK_HAS(m, "shape (1, 3, 5), expected (1, 3, 227, 227)");
    CHECK_HAS(msg_of(replace(good, "<f4", "<f8")), "dtype <f8, expected <f4");
    CHECK_HAS(msg_of(replace(good, "<f4", ">f4")), "dtype >f4, expected <f4");
    CHECK_HAS(msg_of(replace(good, "False", "True ")), "fortran_order");
    CHECK_HAS(msg_of("PK\x03\x04 this is a zip"), "not a .npy file");
    CHECK_HAS(msg_of(""), "not a .npy file");
    CHECK_HAS(msg_of(replace(good, std::string("\x93NUMPY\x01", 7), std::string("\x93NUMPY\x04", 7))),
              "unsupported .npy format version 4.0");
    CHECK_HAS(msg_of(good.substr(0, 40)), "truncated in the .npy header");
    CHECK_HAS(msg_of(replace(good, "'shape'", "'shapf'")), "unexpected key 'shapf'");
    CHECK_HAS(msg_of(replace(good, "(1, 3, 5)", "(1, x, 5)")), "bad .npy header");
    CHECK_HAS(msg_of(replace(good, "(1, 3, 5), }", "(15), }     ")), "not a tuple");
    std::string no_newline = good;
    no_newline[header - 1] = ' ';
    CHECK_HAS(msg_of(no_newline), "does not end with a newline");

    const fs::path missing = dir.path / "missing.npy";
    m = error_message([&] { cs::read_npy_f32(missing); });
    CHECK_HAS(m, missing.string());
    CHECK_HAS(m, "does not exist");
}

TEST_CASE("SHA-256 of buffers, streams and files", "[checksum]") {
    CHECK(cs::sha256_hex("abc", 3) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(cs::sha256_hex("", 0) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    cs::Sha256 h;
    h.update("a", 1);
    h.update("bc", 2);
    CHECK(h.hex_digest() == cs::sha256_hex("abc", 3));
    TempDir dir;
    std::string big(5 << 20, '\0');
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = char(i * 2654435761u >> 24);
    spit(dir.path / "big.bin", big);
    CHECK(cs::sha256_file(dir.path / "big.bin") == cs::sha256_hex(big.data(), big.size()));
    CHECK_THROWS_AS(cs::sha256_file(dir.path / "nope"), cs::Error);
}
