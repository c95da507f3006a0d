// `convstudy generate`: the golden files of a table's layers (and of its chain), through the
// golden-file library (goldenio/). Shared option groups: command_common.hpp.
#include "command_common.hpp"

#include "golden.hpp"
#include "golden_chain.hpp"

namespace cs::cli::detail {

// ---- generate --------------------------------------------------------------------------


// The options both kinds of generation take, as the command line gives them.
void set_run_options(GoldenRunOptions& o, const GenerateArgs& a) {
    o.batches = a.batches;
    o.root = a.out;
    o.seed = a.seed;
    o.quiet = a.quiet;
    o.time_cpu = !a.no_cpu_timing;
}

// generate --chain: the chain golden files of a chain table (golden_chain.hpp).
int cmd_generate_chain(const GenerateArgs& a, const LayerTable& table) {
    if (!a.only.empty()) throw Error("generate --chain: --only does not apply (a chain holds every layer)");
    if (a.input_scale != "1" || a.weight_scale != "1")
        throw Error("generate --chain: --input-scale and --weight-scale are not offered for chains");
    ChainGenerateOptions o;
    set_run_options(o, a);
    generate_chain_golden(table, o);
    if (!a.quiet)
        std::fprintf(stderr, "chain golden files written under %s\n", golden_chain_dir(o.root, table).string().c_str());
    return 0;
}

int cmd_generate(const GenerateArgs& a) {
    check_batches(a.batches);
    const LayerTable table = a.table.load();
    if (a.chain) return cmd_generate_chain(a, table);
    for (const auto& n : a.only) find_layer(table, n);
    GenerateOptions o;
    set_run_options(o, a);
    o.time_onednn = !a.no_onednn;
    o.layers = a.only;
    o.scales = {parse_data_scale(a.input_scale, "--input-scale"), parse_data_scale(a.weight_scale, "--weight-scale")};
    generate_golden(table, o);
    if (!a.quiet)
        std::fprintf(stderr, "golden files written under %s\n",
                     golden_table_dir(o.root, table, o.scales).string().c_str());
    return 0;
}

}  // namespace cs::cli::detail
