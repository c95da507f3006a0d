// A family as the registry sees it: one spec with its axes and its ladder of rungs, expanded
// into the registry's rows (one per rung and precision). No other place lists variants.
//
// Adding a rung: (1) its file beside the family's, holding the kernel, its supports() and its
// plan(), each taking the PrecisionRow when the rung runs in several precisions (else the plain
// signatures, wrapped by plain() below); (2) one Rung line in the family's spec,
// `Family <family>_family()` (families.hpp says which file holds it), with the two entry points
// declared beside the spec. Its place in the spec is its place in `convstudy list`.
// Adding a family: its spec function, declared and listed in families.hpp.
//
// A rung's name and idea may hold "{p}", replaced by each precision row's suffix
// ("hopper-ws-{p}" -> hopper-ws-fp16, hopper-ws-bf16, hopper-ws-tf32). supports() and
// make_plan() receive the row they run for, so one function serves every precision of a rung
// (no per-type wrappers).
#pragma once

#include "variant.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cs::gpu {

// One precision a rung runs in: its class, the element type on the bus, the name suffix.
struct PrecisionRow {
    Precision precision = Precision::fp32;
    DType io = DType::f32;
    std::string suffix;  // replaces "{p}" in the rung's name and idea
};
// The common rows: a class with its operand type and its name as suffix (precision.hpp's table).
PrecisionRow class_row(Precision p);
PrecisionRow row_fp32();
PrecisionRow row_tf32();
PrecisionRow row_fp16();
PrecisionRow row_bf16();

using RungSupports = std::function<std::optional<std::string>(const PrecisionRow&, const Problem&, const cudaDeviceProp&)>;
using RungPlan = std::function<std::unique_ptr<Plan>(const PrecisionRow&, const Problem&, const PlanContext&)>;
using RungEstimate =
    std::function<std::optional<Estimate>(const PrecisionRow&, const Problem&, const cudaDeviceProp&)>;

// What a rung's rows declare beyond their name and entry points; the rungs of a family often
// share it whole (cuDNN's: library, both layouts, order-dependent).
struct RungTraits {
    std::string algo = "direct";
    std::vector<Layout> layouts = {Layout::nchw};
    bool deterministic = true;
};

struct Rung : RungTraits {
    std::string name;                // may hold {p}
    std::vector<PrecisionRow> rows;  // one registry row each
    std::string idea;                // may hold {p}
    RungSupports supports;
    RungPlan make_plan;
    std::vector<Alias> aliases;      // only for a rung of one row
    std::vector<Axis> axes;          // beyond the family's
    std::string ladder;              // empty: the family's name (a family of unrelated ladders names each)
    RungEstimate estimate;           // the family's cost model of the rung (Variant::estimate); empty: none
};

// The rung builder of the family specs: one Rung from its parts.
Rung make_rung(std::string name, std::vector<PrecisionRow> rows, std::string idea, RungSupports supports,
               RungPlan make_plan, RungTraits traits = {}, std::vector<Axis> axes = {});

// One rung per precision row where each class's idea differs (the library anchors: cuDNN's graph
// and legacy APIs), all on the same entry points: `name` with {p} filled per row.
struct RowIdea {
    PrecisionRow row;
    std::string idea;
};
std::vector<Rung> rung_per_row(const std::string& name, const std::vector<RowIdea>& rows, const RungSupports& supports,
                               const RungPlan& make_plan, const RungTraits& traits);

struct Family {
    std::string name;                // the CSV's `family`
    std::vector<Axis> axes;          // every rung's
    std::vector<Rung> rungs;         // the ladder, in order
    // A library's rows (cuDNN's and cuBLAS's engines): anchors the study compares against, never
    // ours: `tune` and the auto-* rungs do not choose them.
    bool library = false;
    // Its rows run another row's plan, chosen per problem (the auto-* rungs): Variant::delegates.
    bool delegates = false;
};

// The registry rows of one family, in rung order, precisions in the order given.
std::vector<Variant> expand(const Family& f);

// Adapters for variants whose entry points take no row (one precision per rung).
using PlainSupports = std::optional<std::string> (*)(const Problem&, const cudaDeviceProp&);
using PlainPlan = std::unique_ptr<Plan> (*)(const Problem&, const PlanContext&);
RungSupports plain(PlainSupports f);
RungPlan plain(PlainPlan f);

// Host and kernels. A family's spec and its rungs' supports() are host code (the family's .cpp
// files, compiled by the host compiler in every build); the plans and their kernels are the .cu
// files, compiled only where CMake's CONVSTUDY_KERNELS is ON (the default). OFF is the host-only
// build of the CPU tests (scripts/test.sh on a machine without a GPU): every row is listed,
// supports() answers, and no plan can be made (kernels_built(), variant.hpp; the GPU commands
// say so). A spec names a plan factory only through CS_PLAN, so that a host-only build does not
// link against the kernels:
//     make_rung("wmma-fp16", {row_fp16()}, "...", plain(wmma_fp16_supports), CS_PLAN(wmma_fp16_plan))
// CS_PLAN takes a plain entry point (PlainPlan), a row-taking one or a RungPlan.
inline RungPlan kernel_plan(PlainPlan f) { return plain(f); }
inline RungPlan kernel_plan(RungPlan f) { return f; }
#ifdef CONVSTUDY_HAVE_KERNELS
#define CS_PLAN(f) ::cs::gpu::kernel_plan(f)
#else
#define CS_PLAN(f) ::cs::gpu::RungPlan{}
#endif

}  // namespace cs::gpu
