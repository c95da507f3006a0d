// What a variant is, as the harness, the CLI and the tests see it.
//
// A variant is a kernel strategy with its precision. It never allocates its inputs or
// outputs and never copies to or from the host: the harness owns memory modes, copies,
// timing and checking. A variant answers supports() (or throws cs::Skip while planning),
// builds a Plan outside the timed region (workspace, function attributes, library
// handles), and the Plan enqueues all of its kernels on the stream it is given.
//
// Every variant is one row that registry.cpp expands from its family's spec (family.hpp);
// no other place lists them.
#pragma once

#include "precision.hpp"
#include "layer.hpp"
#include "split_mutation.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cs::gpu {

// Precision (the class) and DType (the operands' element type): precision.hpp, with the table
// of each class's facts.

// Memory layout of the tensors a variant is given (a harness axis, like memory modes).
//   nchw  input N*C*H*W, weights M*C*R*S (KCRS), output N*M*E*F — the golden files' layout
//   nhwc  input N*H*W*C, weights M*R*S*C (KRSC), output N*E*F*M — channels last, what
//         tensor-core kernels and PyTorch's channels_last use
enum class Layout { nchw, nhwc };
std::string_view to_string(Layout l);
std::optional<Layout> parse_layout(std::string_view s);
const std::vector<Layout>& all_layouts();

// An axis of a family: a choice beyond precision that a sweep can walk, as nvbench walks a
// benchmark's axes (a Hopper rung's tile, schedule, tile scheduler, epilogue). The first
// value is never implied: a row whose Config leaves the axis unset runs the variant's
// default, which its plan chooses per problem and reports through Plan::config().
struct Axis {
    std::string name;                 // "tile"
    std::vector<std::string> values;  // every value a row may set, as spelled (the CLI, plans, the CSV)
    std::string help;                 // one line: what it varies
    // The family's typed value of each spelling (its tile table's index, its enum's value, a
    // count); empty: the spelling's position. Plans see only these.
    std::vector<int> ids = {};
    int id(std::size_t i) const { return ids.empty() ? int(i) : ids[i]; }
};

// The axis values set for one row as spelled (name -> value), at the edges only: the command
// line, plans and tests write them, axis_values (axis_text.cpp) reads them into AxisValues; an
// axis left out takes the default.
struct Config {
    std::vector<std::pair<std::string, std::string>> set;
    // The value set for `axis`, "" when it takes the default.
    std::string get(std::string_view axis) const;
    // "tile=m128n256k64B-s4;schedule=pingpong" (in the order set), "" when nothing is set.
    std::string str() const;
    // The inverse of str(), for a config read back from text (the CSV's `config`): NAME=VALUE
    // pairs separated by ';', a pair without '=' skipped; the values are not checked here
    // (config_error, axis_values check them against a variant).
    static Config parse(std::string_view text);
    bool empty() const { return set.empty(); }
};

// The axis values set for one row, typed: for each axis the row set, the family's value its
// spelling stands for (Axis::ids). A plan reads them with id() or as<E>() and never sees a
// spelling.
struct AxisValues {
    std::vector<std::pair<std::string, int>> set;  // (axis, id), in the order set
    std::optional<int> id(std::string_view axis) const {
        for (const auto& [k, v] : set)
            if (k == axis) return v;
        return std::nullopt;
    }
    template <class E>
    std::optional<E> as(std::string_view axis) const {
        const auto v = id(axis);
        return v ? std::optional<E>(static_cast<E>(*v)) : std::nullopt;
    }
    bool has(std::string_view axis) const { return id(axis).has_value(); }
    bool empty() const { return set.empty(); }
};

struct Problem {
    Layer layer;
    std::int64_t N = 1;
    Layout layout = Layout::nchw;
    AxisValues axes;  // the variant's axes only (axis_values checks them)
};

// Device-visible tensors for one (sub-)batch, in the variant's DType and the problem's
// layout (see Layout). A chunk of images starts at image `first` of the batch in either
// layout, since N is the outermost dimension of both.
struct DeviceIO {
    const void* in = nullptr;   // N*C*H*W elements
    const void* w = nullptr;    // M*C*R*S elements
    void* out = nullptr;        // N*M*E*F elements
    std::int64_t N = 0;         // images in this call (a chunk of the problem's batch)
    // The network ops fused into the epilogue (a chain's layer), only for a plan whose
    // fuses_post_ops() is true: out = relu ? max(conv + bias[m], 0) : conv + bias[m], the bias
    // (M values of the DType, null: none) added in float before the output's one rounding.
    const void* bias = nullptr;
    bool relu = false;
    // Launch the plan's first kernel as the programmatic dependent of the work before it on the
    // stream (PDL: its launch and prologue under that kernel's tail; a chain's layer), only for
    // a plan whose launches_dependent() is true: that kernel waits (griddepcontrol.wait) for
    // the work before it to complete before it reads its input or writes anything.
    bool dependent = false;
};

class EngineChoices;  // engine_choice.hpp
struct Tuning;        // tuning.hpp

// The run's state that reaches every plan (no process-wide singleton does): the caller sets it
// in RunOptions (harness.hpp) and the harness hands it to each plan in its PlanContext.
struct PlanState {
    // The engines the library anchors chose before and their reuse and build-only switches
    // (engine_choice.hpp), which their search reads and updates; null: every search chooses
    // afresh and remembers nothing.
    EngineChoices* engines = nullptr;
    // Test only (split_mutation.hpp): the mutation the fp32-class split plans apply.
    SplitMutation split_mutation = SplitMutation::none;
    // The measured choices plans take before their rules (tuning.hpp: --tuning, CONVSTUDY_TUNING);
    // null: the built-in per-card tables.
    const Tuning* tuning = nullptr;
};

// What a plan is built with: the run's state (PlanState), the device and its limits. A plan that
// builds another (space-to-depth, canvases) passes a copy on.
struct PlanContext : PlanState {
    const cudaDeviceProp& prop;
    int device = 0;
    // Largest workspace a plan may allocate (bytes); a plan that needs more must chunk
    // its work to fit, or throw cs::Skip with the reason.
    std::size_t workspace_limit = 0;
    // The largest batch one run() call will be given (the streams mode cuts batches).
    std::int64_t max_chunk_N = 0;
};

class Plan {
public:
    virtual ~Plan() = default;
    // Enqueue every kernel of the variant on `stream`. No allocation, no host sync.
    virtual void run(const DeviceIO& io, cudaStream_t stream) = 0;
    // Whether run() applies DeviceIO's bias and ReLU in its epilogue (else it must be given none,
    // and the caller runs them after it: bench/chain_ops.hpp).
    virtual bool fuses_post_ops() const { return false; }
    // Whether run() honours DeviceIO::dependent (else it launches as every plan does, after
    // the work before it has completed).
    virtual bool launches_dependent() const { return false; }
    // The caller's promise that `w` holds the layer's weights and will not change while the plan
    // lives (a network's, loaded once: the chain). A plan that transforms its weights may do it
    // now, on `stream`, and read its copy in every later run() given the same `w` instead of
    // transforming them again; true when it did (the transform is then plan time, not run time).
    virtual bool hold_weights(const void* w, cudaStream_t stream) {
        (void)w, (void)stream;
        return false;
    }
    // Device memory the plan holds beside the tensors.
    virtual std::size_t workspace_bytes() const { return 0; }
    // What the plan chose (launch geometry, chunks, algorithm), for the CSV.
    virtual std::string detail() const { return {}; }
    // A library engine search's own median kernel time for the configuration the plan runs,
    // when that configuration runs the row's whole problem in one call (ms; NaN otherwise: no
    // search, a chunked batch, or chunks on another engine). The CSV's `search_ms`: a row's
    // kernel time against the search's tells a timing or data effect from the engine's speed.
    virtual double search_ms() const { return std::numeric_limits<double>::quiet_NaN(); }
    // How the plan computes when it decides at plan time (a library's engine: "gemm",
    // "winograd", "fft"); empty: the registry's Variant::algo.
    virtual std::string algo() const { return {}; }
    // Every axis value the plan runs with, defaults resolved ("tile=...;schedule=..."), for
    // the CSV's `config` column; empty for a variant without axes.
    virtual std::string config() const { return {}; }
    // After a run has completed (the caller synchronised; this may synchronise again): what the
    // run could not represent, or nothing. The fp32-class split variants scale their tensors on
    // the device and set a flag there for data outside their range (kernels/common/range_scale.hpp);
    // this reads it, outside any timed region. The harness turns a message into an ERROR.
    virtual std::optional<std::string> run_error() const { return std::nullopt; }
    // Whether the plan's result is the same bits on every run, when the plan decides it (a
    // library's chosen engine); nothing: the registry's Variant::deterministic.
    virtual std::optional<bool> deterministic() const { return std::nullopt; }
};

// A study abbreviation accepted on the command line. `memory` set means the alias also
// selects a memory mode (the study's "UM" is the baseline in managed memory).
struct Alias {
    std::string name;
    std::string memory;  // empty: no memory mode implied
};

// A cost model's answer for one configuration (Variant::estimate): the predicted kernel time and
// how the model got it (the tile count, waves, split and the bound that decides), for the CSV's
// detail. compute_ms: the time before the DRAM floor is applied (ms where none binds), which
// orders configurations the floor ties: the one furthest under it is likelier to reach it.
struct Estimate {
    double ms = 0;
    std::string how;
    double compute_ms = 0;
};

struct Variant {
    std::string name;            // canonical name, lower-case with dashes
    std::vector<Alias> aliases;  // the study's abbreviations
    std::string family;          // "baseline", "single-kernel", "multi-kernel", ...
    std::string rung;            // the rung it is a row of: its name without the precision ("hopper-ws")
    std::string ladder;          // the ladder the rung stands on: the family, unless the spec names another
    Precision precision = Precision::fp32;
    DType io = DType::f32;
    std::string idea;            // one line: what it studies
    bool deterministic = true;   // false: result depends on the order of atomics
    bool library = false;        // a library's engine, an anchor (Family::library), not ours
    // Runs another row's plan, chosen per problem (the auto-* rungs: a tuned choice or the
    // heuristic's; Family::delegates): tune and the heuristic never choose such a row.
    bool delegates = false;
    // Empty when the variant can run the problem on this device, else why not.
    std::function<std::optional<std::string>(const Problem&, const cudaDeviceProp&)> supports;
    // Builds the plan (outside timing) for a problem supports() accepted on this device: the
    // harness asks supports() once per row, and plans do not ask again (tests/parse_lint.py).
    // May throw cs::Skip for what only planning knows (workspace, shared memory, the chunk).
    std::function<std::unique_ptr<Plan>(const Problem&, const PlanContext&)> make_plan;
    // How it computes, for the CSV's `algo` column: "direct", "gemm" (explicit or implicit
    // GEMM), "winograd", "fft", or "library" (an engine the library chooses: the row's
    // detail names it; a library row may overwrite it through Plan::algo()).
    std::string algo = "direct";
    // Layouts it runs; the harness skips the others with the reason.
    std::vector<Layout> layouts = {Layout::nchw};
    // Axes a sweep can walk (the family's and the rung's); empty for most variants.
    std::vector<Axis> axes;
    // The family's cost model of this row, where it has one (the persistent Hopper rungs and
    // rung 1, kernels/hopper/ws_model.hpp): the predicted time of a problem with its axis values
    // on a device, or nothing where the model cannot price it (an axis value that cannot run
    // there, an axis the model needs left unset). Empty: no model. The auto-* rungs' heuristic ranks
    // configurations by it.
    std::function<std::optional<Estimate>(const Problem&, const cudaDeviceProp&)> estimate;
    // The axis of that name, or null (axis_text.cpp).
    const Axis* axis(std::string_view axis_name) const;
};

// The registry: every family's rows, expanded from the family specs (family.hpp) that
// families.hpp lists.
const std::vector<Variant>& registry();
// Whether this build holds the variants' kernels (CMake option CONVSTUDY_KERNELS): without them
// every row is listed and answers supports(), and its make_plan throws cs::Error with
// kernels_absent_reason() (empty when the kernels are built).
bool kernels_built();
std::string kernels_absent_reason();

// The axes' text edge (axis_text.cpp, the one place that reads or writes a spelled axis value):
// Checks a row's config against the variant's axes: empty when every name is an axis of the
// variant and every value one of the axis's values, else the message that says which are.
std::optional<std::string> config_error(const Variant& v, const Config& c);
// The typed values of a checked config (throws cs::Error with config_error's message), and back.
AxisValues axis_values(const Variant& v, const Config& c);
Config axis_config(const Variant& v, const AxisValues& a);
// Whether every typed value is one of the variant's (a plan's input from code, not text).
std::optional<std::string> axes_error(const Variant& v, const AxisValues& a);
// Parses "name=v1,v2,...": the axis and its values ("all": every value the variant's axis
// lists, expanded per variant by expand_axis_values). Throws cs::Error on a malformed text.
std::pair<std::string, std::vector<std::string>> parse_axis_arg(std::string_view text);
// The values of `axis` a sweep runs for `v`: `requested` with "all" expanded, "default" as ""
// (the variant's own choice), values v's axis lacks left out; empty when v has no such axis
// (the variant then runs its default once).
std::vector<std::string> expand_axis_values(const Variant& v, const std::string& axis,
                                            const std::vector<std::string>& requested);

struct VariantRef {
    const Variant* variant = nullptr;
    std::string memory;  // memory mode the name implied ("" if none)
};
// Finds by canonical name or alias, case-insensitively; nullptr variant if none.
VariantRef find_variant(std::string_view name);
// "baseline (Mcpy, UM), rla2m ..." for error messages.
std::string variant_names_for_help();

}  // namespace cs::gpu
