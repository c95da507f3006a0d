// One CSV row per (device, layer, N, variant, memory mode), and the CSV writer.
// The column list is defined once here (csv_columns); README.md documents each column.
#pragma once

#include "harness.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cs::cli {

// Run-wide metadata shared by every row of a sweep.
struct RunMeta {
    std::string timestamp;  // UTC, ISO 8601
    std::string device, cc, cuda_runtime, driver;
    int sms = 0;
    double peak_tflops = 0;  // fp32 FMA ceiling measured in this run
    std::string git_rev, tool_version;
    bool l2_flush = true;
    int warmup = 0, repeats = 0;
};

struct Row {
    Layer layer;
    std::int64_t N = 0;
    std::string variant, family, precision, io_dtype, memory;
    gpu::RunResult result;
    // CPU side of the speedups (from the golden manifest); NaN when unknown.
    double cpu_ms = NAN;
    int cpu_threads = 0;
    std::string cpu_model;
    double cpu_onednn_ms = NAN;
    std::optional<double> vs_cudnn;  // cuDNN fp32 (or fp16 for half rows) kernel_ms / ours
};

const std::vector<std::string>& csv_columns();
std::vector<std::string> csv_fields(const RunMeta& meta, const Row& row);
// Writes header + rows atomically (temporary file + rename).
void write_csv(const std::filesystem::path& path, const RunMeta& meta, const std::vector<Row>& rows);
// Throws cs::Error now, before any long run, when `path` cannot be written.
void check_writable(const std::filesystem::path& path);

// Fills vs_cudnn from the cuDNN rows of the same (layer, N) and memory mode: fp32, tf32
// rows against cuDNN fp32; fp16 rows against cuDNN fp16.
void fill_vs_cudnn(std::vector<Row>& rows);

}  // namespace cs::cli
