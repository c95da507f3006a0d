// One CSV row per (device, layer, N, variant, memory mode), and the CSV writer.
// The column list is defined once here (csv_columns); README.md documents each column.
#pragma once

#include "datagen.hpp"
#include "harness.hpp"
#include "names.hpp"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace cs::cli {

// Run-wide metadata shared by every row of a sweep.
struct RunMeta {
    std::string timestamp;  // UTC, ISO 8601
    std::string device, cc, cuda_runtime, driver;
    int sms = 0;
    // Ceilings measured in this run (TFLOP/s per ceiling class, gpu::ceiling_class),
    // and the device-to-device copy bandwidth (GB/s, bytes read + written).
    double peak_fp32 = 0, peak_tf32 = 0, peak_fp16 = 0, peak_bf16 = 0, copy_gbs = 0;
    double peak_for(gpu::Precision precision) const;  // its ceiling class's
    std::string git_rev, tool_version;
    std::string table;                  // the layer table's name (a built-in's, or the file's "name" field)
    std::string cudnn_version;          // the cuDNN library this process ran ("" without cuDNN)
    bool l2_flush = true;
    int warmup = 0, repeats = 0;
    std::optional<std::uint64_t> seed;  // the generator seed of the inputs (column `seed`)
    std::optional<DataScales> scales;   // their data scales (columns `input_scale`, `weight_scale`)
};

// The family whose rows are the cuDNN anchors (not cudnn-legacy): ours_over_cudnn divides by its
// fastest PASS row, and sweep re-times and re-runs its rows.
inline bool is_anchor_family(std::string_view family) { return family == "cudnn"; }

// What a row times: one convolution alone (`sweep`, `run`), a whole chain table run as a network
// (`chain`), or one layer's part of a chain replayed alone (`chain`'s layer replay: its
// convolution, epilogue and pool).
enum class Scope { conv, chain, layer };
inline constexpr NameTable<Scope, 3> kScopeNames{
    {{Scope::conv, "conv"}, {Scope::chain, "chain"}, {Scope::layer, "layer"}}};
inline std::string_view to_string(Scope s) { return name_of(kScopeNames, s); }

// A row's identity is typed: the registry's variant (its name, family, precision class and element
// type), the memory mode and the layout. Their spellings are written at the edges only: the CSV
// (csv_fields), the summary line and the command line of a re-time.
struct Row {
    Layer layer;
    std::int64_t N = 0;
    const gpu::Variant* variant = nullptr;  // never null in a row that ran or was skipped
    gpu::MemoryMode memory = gpu::MemoryMode::pageable;
    gpu::Layout layout = gpu::Layout::nchw;
    gpu::RunResult result;
    Scope scope = Scope::conv;
    // scope chain: the chain's convolution FLOPs (its layers' sum); `layer` then names no shape.
    double chain_flops = 0;
    gpu::Precision precision() const { return variant->precision; }
    bool is_cudnn() const { return is_anchor_family(variant->family); }
    // CPU side of the speedups (from the golden manifest); NaN when unknown.
    double cpu_ms = NAN;
    int cpu_threads = 0;
    std::string cpu_model;
    double cpu_onednn_ms = NAN;
    // Ours over the fastest cuDNN row (kernel_ms / cuDNN's kernel_ms; below 1 = faster than
    // cuDNN): same anchor class (gpu::anchor_class), layout and memory mode (ours_over_cudnn),
    // or either layout (ours_over_cudnn_any_layout).
    std::optional<double> ours_over_cudnn, ours_over_cudnn_any_layout;
    // cuBLAS on the explicit im2col GEMM of the layer in the row's precision class, this run (ms):
    // a reference, not a ceiling (it streams the im2col matrix; an implicit GEMM need not).
    std::optional<double> im2col_gemm_ms;
    // cuDNN rows whose median strayed from their own engine search's: the median of a re-time in a
    // fresh process (ms), when the sweep re-timed it.
    std::optional<double> cudnn_retime_ms;
    // cuDNN rows of a sweep with --cudnn-processes K: the median, min and max of the row's
    // medians over the processes in which it PASSed (this one's: the faster of its median and
    // its re-time), and how many those were.
    int cudnn_processes = 0;
    std::optional<double> cudnn_process_ms, cudnn_process_min_ms, cudnn_process_max_ms;
};

// The results CSV's schema, one table (results.cpp): each column's name, type (text, int,
// real, flag), unit ("" when none), meaning (nullptr: the one of the column before it, so a
// group of columns shares one) and how a row's value is written. The header, every row and
// docs/csv-columns.md (`convstudy schema`) come from it. kCsvSchemaVersion is written in every
// row (column schema_version) and goes up when a column is added, removed, renamed or changes
// meaning: 2 is the first CSV with the column (a CSV without it is version 1).
inline constexpr int kCsvSchemaVersion = 5;  // 3: rung and ladder; 4: table, count, axis_path (the auto-* rows); 5: scope, kernel_p99_ms
struct CsvCell;  // a row's values, computed once (results.cpp)
struct CsvColumn {
    std::string name;
    const char* type;
    const char* unit;
    const char* meaning;
    std::function<std::string(const CsvCell&)> value;
};
const std::vector<CsvColumn>& csv_schema();
// The axis values a row set, spelled as the CSV's `axes` column and --axis take them
// ("scheduler=split-k;tile=..."; empty: the variant's defaults).
std::string axes_text(const Row& row);
// The schema as the markdown table of docs/csv-columns.md: one line per group of columns.
std::string schema_markdown();
const std::vector<std::string>& csv_columns();
std::vector<std::string> csv_fields(const RunMeta& meta, const Row& row);
// A number as the CSV writes it (empty for NaN): `merge` rewrites derived columns with it.
std::string csv_number(double v);
// One row as the sweep and run commands print it: PASS rows with their times, error and (when
// the CPU's time is known) speedup, and the axis values the row set; other rows with the reason.
std::string summary_line(const Row& row);
// Columns after csv_columns() (e.g. `profile`'s ncu_* counters): names, and one list of
// fields per row.
struct ExtraColumns {
    std::vector<std::string> names;
    std::vector<std::vector<std::string>> fields;
};
// Writes header + rows atomically (temporary file + rename).
void write_csv(const std::filesystem::path& path, const RunMeta& meta, const std::vector<Row>& rows,
               const ExtraColumns* extra = nullptr);
// Throws cs::Error now, before any long run, when `path` cannot be written.
void check_writable(const std::filesystem::path& path, const std::string& option = "--csv");

// gpu::anchor_class of a precision class's name as a CSV spells it (gpu::to_string(Precision));
// an unknown name (a CSV from another revision) is its own class.
std::string anchor_class(const std::string& precision);
// ours_over_cudnn and ours_over_cudnn_any_layout of rows told by their keys, as a sweep's rows
// (fill_ours_over_cudnn) and merged CSV rows (merge) both have them: per row, its kernel time
// over the fastest PASS cuDNN row of the same group (layer, N, memory mode, anchor class) in its
// layout, and in either layout. kernel_ms NaN: not PASS (no ratio, and no anchor).
struct RatioRow {
    std::string group, layout;
    bool cudnn = false;
    double kernel_ms = NAN;
    // A row told by its spellings (the CSV's, or a typed row's names): the group key and the
    // anchor rule (family `cudnn`) in one place for both callers.
    static RatioRow of(const std::string& layer, std::int64_t N, std::string_view memory, std::string_view anchor_class,
                       std::string_view layout, std::string_view family, double kernel_ms);
};
struct Ratios {
    std::optional<double> same_layout, any_layout;
};
std::vector<Ratios> ours_over_cudnn(const std::vector<RatioRow>& rows);
void fill_ours_over_cudnn(std::vector<Row>& rows);
// Sets the cudnn_process* fields from the row's medians, one per process in which it PASSed
// (none: the fields stay empty).
void set_cudnn_processes(Row& row, std::vector<double> medians);

}  // namespace cs::cli
