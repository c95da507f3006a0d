// Helpers for the CPU tests that read committed sweeps (results/<card>/**.csv[.gz]): a column
// required to be there, and the problem a row ran (its shape, N and layout; axes unset).
#pragma once

#include "catch.hpp"
#include "csv_table.hpp"
#include "test_util.hpp"
#include "variant.hpp"

#include <string>
#include <vector>

namespace cs::test {

inline gpu::Problem problem(const Layer& l, std::int64_t N, gpu::Layout layout) {
    gpu::Problem p;
    p.layer = l;
    p.N = N;
    p.layout = layout;
    return p;
}

// A committed sweep's column, required to be there.
inline std::size_t column(const cli::CsvTable& t, const char* name) {
    const int c = t.col(name);
    REQUIRE(c >= 0);
    return std::size_t(c);
}

// The problem a committed sweep's row ran.
inline gpu::Problem measured_problem(const cli::CsvTable& t, const std::vector<std::string>& r) {
    auto num = [&](const char* n) { return std::stoi(r[column(t, n)]); };
    return problem(make_layer("measured", num("C"), num("H"), num("W"), num("M"), num("R"), num("S"), num("stride"),
                              num("pad")),
                   num("N"), r[column(t, "layout")] == "nhwc" ? gpu::Layout::nhwc : gpu::Layout::nchw);
}

}  // namespace cs::test
