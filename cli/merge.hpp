// `convstudy merge A.csv B.csv ... -o all.csv`: the CSVs of a sharded sweep (`sweep --shard
// K/N`, one process per GPU or per SLURM task) joined into one CSV that plots/ and `compare`
// read as if one process had made it.
//
// Refused (exit 2, naming the files and values): parts from different git revisions, tool
// versions, devices (name and compute capability) or sweep settings (warm-up, L2 flush), an
// unknown revision, and a row (layer, N, variant, memory, layout) in two parts. The columns
// that depend on other rows are recomputed over the merged set with the sweep's own code:
// ours_over_cudnn and ours_over_cudnn_any_layout (fill_ours_over_cudnn: the fastest cuDNN row may have run in another
// shard); each precision class's ceiling (peak_tflops, and pct_peak with it) becomes the
// highest any part measured, the device copy bandwidth likewise, and the cuBLAS im2col GEMM reference of a
// (layer, N, precision) the fastest measured: one value each, as one process has. Rows are
// put in sweep order (N, layer, registry order, memory mode, layout).
#pragma once

#include "csv_table.hpp"

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace cs::cli {

struct MergeResult {
    CsvTable table;
    std::vector<std::string> notes;  // ceilings that differed, dirty revisions, ...
};

// Throws cs::Error for parts that cannot be one sweep.
MergeResult merge_tables(const std::vector<CsvTable>& parts);

// Writes a table atomically, quoted as the sweep writes its CSVs.
void write_csv_table(const std::string& path, const CsvTable& t);

struct MergeArgs {
    std::vector<std::string> inputs;
    std::string out;
};
CLI::App* add_merge_command(CLI::App& app, MergeArgs& a);
int cmd_merge(const MergeArgs& a);

}  // namespace cs::cli
