// Plans (plans/*.json, cli/plan.hpp): every committed plan loads (schema, variant, layer,
// table, preset and script names checked), bad plans are refused naming the file, the step and
// the field, and the commands a plan turns into are the ones its fields say.
#include "plan.hpp"
#include "shell_quote.hpp"
#include "test_util.hpp"
#include "variant.hpp"

#include <algorithm>
#include <iterator>
#include <set>

using namespace cs;
using namespace cs::cli;
using cs::test::error_message;
namespace fs = std::filesystem;

namespace {

const fs::path kRoot = CS_SOURCE_DIR;

std::vector<fs::path> committed_plans() {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(kRoot / "plans"))
        if (e.path().extension() == ".json") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

// A plan around `steps` (JSON text of the steps after the build step).
std::string plan_text(const std::string& steps) {
    return R"({"name": "t", "purpose": "a test plan", "steps": [{"kind": "build"})" +
           (steps.empty() ? std::string() : ", " + steps) + "]}";
}

Plan parse(const std::string& steps) { return parse_plan(plan_text(steps), "t.json", kRoot); }

std::string error_of(const std::string& steps) {
    return error_message([&] { parse(steps); });
}

}  // namespace

TEST_CASE("every plan in plans/ loads: schema, variant, layer, table, preset and script names", "[plans]") {
    const auto plans = committed_plans();
    std::set<std::string> names;
    for (const auto& p : plans) {
        INFO(p.string());
        Plan plan;
        REQUIRE_NOTHROW(plan = load_plan(p));
        CHECK(plan.root == kRoot);
        CHECK(plan.name == p.stem().string());  // a plan's name is its file's
        CHECK(!plan.purpose.empty());
        REQUIRE(!plan.steps.empty());
        CHECK(plan.steps.front().kind == StepKind::build);
        names.insert(plan.name);
        // Each step turns into commands; no two steps write one file.
        std::set<std::string> logs;
        for (const auto& sc : step_commands(plan, "out", "build-device")) {
            // (a sweep step after the first of a one-process run has none: the first runs it)
            CHECK((!sc.commands.empty() || (sc.kind == StepKind::sweep && sweeps_in_one_process(plan))));
            CHECK(logs.insert(sc.log).second);
        }
    }
    for (const char* required : {"reference", "goals", "sanitizer"}) {
        INFO(required);
        CHECK(names.count(required) == 1);
    }
}

TEST_CASE("plans/reference.json is the reference sweep: every variant, N=1/32/128, both layouts, golden", "[plans]") {
    const Plan plan = load_plan(kRoot / "plans" / "reference.json");
    const auto sweeps = sweep_steps(plan);
    REQUIRE(sweeps.size() == 1);
    const SweepStep& s = sweeps.front();
    CHECK(s.variants == std::vector<std::string>{"all"});
    CHECK(s.batches == std::vector<std::int64_t>{1, 32, 128});
    CHECK(s.layouts == std::vector<gpu::Layout>{gpu::Layout::nchw, gpu::Layout::nhwc});
    CHECK(s.memory == std::vector<gpu::MemoryMode>{gpu::MemoryMode::pageable});
    CHECK(s.check == CheckMode::golden);
    CHECK(s.warmup >= 3);
    CHECK(s.repeats == 20);
    CHECK(s.layers.empty());  // every layer of the table
    CHECK(s.table.path.empty());
    // The PyTorch anchors run in the same call, after the sweep.
    REQUIRE(plan.steps.back().kind == StepKind::python);
    CHECK(std::get<PythonStep>(plan.steps.back().body).script == "pytorch_anchors.py");
}

TEST_CASE("sweep_command_line gives the equivalent convstudy sweep arguments", "[plans]") {
    const Plan plan = parse(R"({"kind": "golden", "batches": [32, 128], "layers": ["conv2", "conv3"]},
        {"kind": "sweep", "csv": "tiles.csv", "variants": ["hopper-ws-fp16", "cudnn-fp16"], "layers": ["conv2", "conv3"],
         "batches": [32, 128], "layouts": ["nhwc"], "memory": ["pageable", "pinned"], "axes": ["tile=all"],
         "warmup": 2, "repeats": 10, "host_repeats": 5, "flags": ["--no-flush", "--workspace-limit", "4"]},
        {"kind": "sweep", "csv": "s.csv", "variants": ["simt-gemm"], "batches": [512], "check": "sampled",
         "samples": 1024, "input_scale": "2^-12", "weight_scale": "4096"})");
    const auto sweeps = sweep_steps(plan, "/tmp/o");
    REQUIRE(sweeps.size() == 2);
    CHECK(sweep_command_line(sweeps[0]) ==
          std::vector<std::string>{"sweep", "--variants", "hopper-ws-fp16,cudnn-fp16", "--layers", "conv2,conv3",
                                   "--batch", "32,128", "--layout", "nhwc", "--memory", "pageable,pinned", "--axis",
                                   "tile=all", "--check", "golden", "--warmup", "2", "--repeats", "10",
                                   "--host-repeats", "5", "--no-flush", "--workspace-limit", "4", "--csv",
                                   "/tmp/o/tiles.csv", "--quiet"});
    CHECK(sweep_command_line(sweeps[1]) ==
          std::vector<std::string>{"sweep", "--variants", "simt-gemm", "--batch", "512", "--layout", "all",
                                   "--memory", "pageable", "--check", "sampled", "--samples", "1024",
                                   "--input-scale", "2^-12", "--weight-scale", "2^12", "--warmup", "3",
                                   "--repeats", "20", "--csv", "/tmp/o/s.csv", "--quiet"});
}

TEST_CASE("a bad plan is refused naming the file, the step and the field", "[plans]") {
    // Each: the steps after the build step, then what the message must say.
    const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
        {R"({"kind": "bake"})", {"t.json: step 1 (bake): 'kind': unknown step kind 'bake'", "gpu-tests"}},
        {R"({"kind": "sweep", "csv": "a.csv", "variants": ["hopper-zz-fp16"], "check": "sampled"})",
         {"t.json: step 1 (sweep): 'variants': unknown variant 'hopper-zz-fp16'"}},
        {R"({"kind": "sweep", "csv": "a.csv", "variants": ["hopper-ws-fp16"], "check": "sampled",
             "axes": ["tile=no-such-tile"]})",
         {"t.json: step 1 (sweep): 'axes':", "'no-such-tile' is a value of no swept variant's axis tile"}},
        {R"({"kind": "sweep", "csv": "a.csv", "variants": ["simt-gemm"], "check": "sampled", "axes": ["colour=red"]})",
         {"t.json: step 1 (sweep): 'axes':", "no swept variant has an axis 'colour'"}},
        {R"({"kind": "sweep", "csv": "a.csv", "batches": [32, 0], "check": "sampled"})",
         {"t.json: step 1 (sweep): 'batches': batch size 0 is out of range (1 to 1048576)"}},
        {R"({"kind": "golden", "batches": [-4]})", {"t.json: step 1 (golden): 'batches': batch size -4 is out of range"}},
        {R"({"kind": "sweep", "csv": "a.csv", "batches": ["32"], "check": "sampled"})",
         {"step 1 (sweep): 'batches': batch size must be an integer, not a string"}},
        {R"({"kind": "sweep", "csv": "a.csv", "check": "sampled", "repeat": 20})",
         {"step 1 (sweep): 'repeat': unknown key", "repeats"}},
        {R"({"kind": "sweep", "csv": "a.csv", "check": "sampled", "layers": ["conv9"]})",
         {"step 1 (sweep): 'layers': no layer 'conv9' in the table 'alexnet'"}},
        {R"({"kind": "sweep", "csv": "a.csv", "check": "sampled", "table": "no/such/table.json"})",
         {"step 1 (sweep): 'table': no file 'no/such/table.json'"}},
        {R"({"kind": "sweep", "csv": "a.csv", "check": "sampled", "table": "vgg"})",
         {"step 1 (sweep): 'table': 'vgg' is neither a built-in table"}},
        {R"({"kind": "sweep", "csv": "a.csv", "check": "sampled", "layouts": ["nwhc"]})",
         {"step 1 (sweep): 'layouts': unknown layout 'nwhc'"}},
        {R"({"kind": "sweep", "csv": "a.csv", "check": "sampled", "memory": ["paged"]})",
         {"step 1 (sweep): 'memory': unknown memory mode 'paged'"}},
        {R"({"kind": "sweep", "csv": "a.csv", "check": "exact"})", {"step 1 (sweep): 'check': unknown check mode 'exact'"}},
        {R"({"kind": "sweep", "csv": "a.csv", "check": "sampled", "repeats": 5, "host_repeats": 6})",
         {"step 1 (sweep): 'host_repeats': 6 is more than repeats (5)"}},
        {R"({"kind": "sweep", "csv": "a.csv", "check": "sampled", "flags": ["--batch", "4"]})",
         {"step 1 (sweep): 'flags': '--batch' is the field 'batches'"}},
        {R"({"kind": "sweep", "csv": "a.csv", "check": "sampled", "flags": ["--turbo"]})",
         {"step 1 (sweep): 'flags': '--turbo' is not an option here"}},
        {R"({"kind": "sweep", "csv": "a.csv", "check": "sampled", "flags": ["--workspace-limit"]})",
         {"step 1 (sweep): 'flags': '--workspace-limit' takes a value"}},
        {R"({"kind": "sweep", "csv": "out/a.csv", "check": "sampled"})", {"step 1 (sweep): 'csv': 'out/a.csv' must be a plain file name"}},
        {R"({"kind": "sweep", "check": "sampled"})", {"step 1 (sweep): 'csv': missing"}},
        {R"({"kind": "sweep", "csv": "a.csv", "batches": [64]})",
         {"step 1 (sweep): 'check': golden, but no earlier golden step makes conv1 at N=64"}},
        {R"({"kind": "golden", "batches": [64], "input_scale": "3"})", {"step 1 (golden): 'input_scale':"}},
        {R"({"kind": "sweep", "csv": "a.csv", "check": "sampled"}, {"kind": "sweep", "csv": "a.csv", "check": "sampled"})",
         {"step 2 (sweep): 'csv': 'a.csv' is written by an earlier step too"}},
        {R"({"kind": "merge", "inputs": ["a.csv", "b.csv"], "output": "m.csv"})",
         {"step 1 (merge): 'inputs': 'a.csv' is written by no earlier step"}},
        {R"({"kind": "compare", "baseline": "no/such.csv", "csv": "a.csv"})", {"step 1 (compare): 'baseline': no file"}},
        {R"({"kind": "python", "script": "no_such_script.py"})", {"step 1 (python): 'script': no file scripts/no_such_script.py"}},
        {R"({"kind": "python", "script": "pytorch_anchors.py", "args": "x.csv"})",
         {"step 1 (python): 'args': must be a list of strings, not a string"}},
        {R"({"kind": "sanitize", "variants": ["cudnn-fp16"]})", {"step 1 (sanitize): 'variants':"}},
        {R"({"kind": "sanitize", "tools": ["leakcheck"]})", {"step 1 (sanitize): 'tools': unknown tool 'leakcheck'"}},
        {R"({"kind": "sanitize", "shard": "5/4"})", {"step 1 (sanitize): 'shard':"}},
        {R"({"kind": "profile", "variant": "hopper-ws-fp16", "layer": "conv2", "output": "p.csv", "metrics": "most"})",
         {"step 1 (profile): 'metrics': unknown metric set 'most'"}},
        {R"({"kind": "profile", "variant": "hopper-ws-fp16", "layer": "conv2", "output": "p.csv", "axes": ["tile=all"]})",
         {"step 1 (profile): 'axes':", "one value per axis"}},
        {R"({"kind": "gpu-tests", "timeout_s": 0})", {"step 1 (gpu-tests): 'timeout_s': 0 is out of range"}},
        {R"({"kind": "build"})", {"step 1 (build): 'kind': a plan has one build step, the first"}},
        {R"(7)", {"step 1: a step is a JSON object, not an integer"}},
    };
    for (const auto& [steps, wants] : cases) {
        INFO(steps);
        const std::string e = error_of(steps);
        for (const auto& want : wants) CHECK_HAS(e, want);
    }
    // Top level: the file and the field.
    CHECK_HAS(error_message([] { parse_plan(R"({"name": "t", "steps": [{"kind": "build"}]})", "p.json", kRoot); }),
              "p.json: 'purpose': missing");
    CHECK_HAS(error_message([] { parse_plan(R"({"name": "t", "purpose": "x", "steps": [], "owner": 1})", "p.json", kRoot); }),
              "p.json: 'owner': unknown key");
    CHECK_HAS(error_message([] {
                  parse_plan(R"({"name": "t", "purpose": "x", "steps": [{"kind": "golden", "batches": [1]}]})", "p.json", kRoot);
              }),
              "p.json: step 0 (golden): 'kind': the first step must be a build step");
    CHECK_HAS(error_message([] {
                  parse_plan(R"({"name": "t", "purpose": "x", "steps": [{"kind": "build", "preset": "fast"}]})", "p.json",
                             kRoot);
              }),
              "p.json: step 0 (build): 'preset': no configure preset 'fast'");
    CHECK_HAS(error_message([] { parse_plan("{\"name\": ", "p.json", kRoot); }), "p.json: not valid JSON");
    CHECK_HAS(error_message([] { load_plan(kRoot / "plans" / "no_such_plan.json"); }), "no_such_plan.json: cannot read");
}

TEST_CASE("a plan's steps become the commands the runner executes", "[plans]") {
    const Plan plan = parse(R"({"kind": "gpu-tests", "filter": ["[axes]", "[layout]"], "timeout_s": 200},
        {"kind": "golden", "batches": [1, 32]},
        {"kind": "sweep", "csv": "a.csv", "variants": ["simt-gemm"], "batches": [1, 32], "layouts": ["nchw"]},
        {"kind": "sweep", "csv": "b.csv", "variants": ["simt-gemm"], "batches": [1], "layouts": ["nchw"]},
        {"kind": "merge", "inputs": ["a.csv", "b.csv"], "output": "m.csv"},
        {"kind": "sanitize", "variants": ["simt-gemm"], "tools": ["memcheck"], "targets": ["odd"], "deadline_s": 100,
         "shard": "2/3"},
        {"kind": "profile", "mode": "ncu", "variant": "simt-gemm", "layer": "conv2", "layout": "nchw", "output": "n.txt",
         "ncu_args": ["--nvtx-include", "convstudy@timed kernels/"]},
        {"kind": "python", "script": "pytorch_anchors.py", "args": ["{out}/pytorch.csv", "--no-compile"]})");
    const auto steps = step_commands(plan, "res", "bd");
    REQUIRE(steps.size() == 9);
    using V = std::vector<std::string>;
    CHECK(steps[0].log == "build.log");
    CHECK(steps[0].commands == std::vector<V>{{"cmake", "--preset", "device", "-B", "bd"},
                                              {"cmake", "--build", "bd", "--parallel"}});
    CHECK(steps[1].log == "gpu_tests.log");
    CHECK(steps[1].timeout_s == 200);
    CHECK(steps[1].commands == std::vector<V>{{"env", "CONVSTUDY_REQUIRE_GPU=1", "bd/tests/convstudy_gpu_tests", "[axes]",
                                               "[layout]"}});
    CHECK(steps[2].commands == std::vector<V>{{"bd/convstudy", "generate", "--batch", "1,32", "--out", "golden", "--quiet"}});
    CHECK(steps[3].log == "step03-sweep.log");
    // Two sweep steps one after the other: one `sweep --plan` process at the first, none at the second.
    CHECK(sweeps_in_one_process(plan));
    CHECK(steps[3].commands == std::vector<V>{{"bd/convstudy", "sweep", "--plan", plan.file.string(), "--out", "res"}});
    CHECK(steps[4].commands.empty());
    CHECK(steps[5].commands == std::vector<V>{{"bd/convstudy", "merge", "res/a.csv", "res/b.csv", "-o", "res/m.csv"}});
    const V& san = steps[6].commands.front();
    CHECK(std::find(san.begin(), san.end(), "SANITIZE_TOOLS=memcheck") != san.end());
    CHECK(std::find(san.begin(), san.end(), "SANITIZE_TARGETS=odd") != san.end());
    CHECK(std::find(san.begin(), san.end(), "SANITIZE_VARIANTS=simt-gemm") != san.end());
    CHECK(std::find(san.begin(), san.end(), "SANITIZE_DEADLINE=100") != san.end());
    CHECK(std::find(san.begin(), san.end(), "SANITIZE_SHARD=2/3") != san.end());
    CHECK(std::find(san.begin(), san.end(), "scripts/sanitize.sh") != san.end());
    CHECK(std::find(san.begin(), san.end(), "res/sanitizer.log") != san.end());
    CHECK(steps[7].commands ==
          std::vector<V>{{"ncu", "--nvtx-include", "convstudy@timed kernels/", "--log-file", "res/n.txt", "bd/convstudy",
                          "run", "--variant", "simt-gemm", "--layer", "conv2", "--batch", "128", "--layout", "nchw",
                          "--memory", "pageable", "--check", "sampled", "--no-cpu-timing", "--warmup", "2", "--repeats",
                          "1", "--profile-target"}});
    CHECK(steps[8].commands ==
          std::vector<V>{{"env", "PYTHONUNBUFFERED=1", "python3", "scripts/pytorch_anchors.py", "res/pytorch.csv",
                          "--no-compile"}});
}

TEST_CASE("sweep steps run in one process unless another step lies between them", "[plans]") {
    const Plan apart = parse(R"({"kind": "golden", "batches": [1]},
        {"kind": "sweep", "csv": "a.csv", "variants": ["simt-gemm"], "batches": [1]},
        {"kind": "golden", "batches": [32]},
        {"kind": "sweep", "csv": "b.csv", "variants": ["simt-gemm"], "batches": [32]})");
    CHECK_FALSE(sweeps_in_one_process(apart));  // the second sweep needs the second golden step's sets
    const auto steps = step_commands(apart, "res", "bd");
    REQUIRE(steps.size() == 5);
    for (std::size_t i : {2, 4}) {
        REQUIRE(steps[i].commands.size() == 1);
        CHECK(steps[i].commands.front().at(1) == "sweep");
        CHECK(steps[i].commands.front().at(2) == "--variants");  // its own command line, no --plan
    }
    CHECK_FALSE(sweeps_in_one_process(parse(R"({"kind": "sweep", "csv": "a.csv", "variants": ["simt-gemm"], "check": "sampled"})")));
}

TEST_CASE("convstudy sweep --plan: every sweep step of a plan in one process", "[plans][cli]") {
    using cs::test::cli;
    cs::test::TempDir dir;
    const fs::path two = dir.path / "two.json";
    cs::test::spit(two, plan_text(R"({"kind": "sweep", "csv": "a.csv", "variants": ["simt-gemm"], "layers": ["conv3"],
        "batches": [1], "layouts": ["nchw"], "check": "sampled", "warmup": 1, "repeats": 2},
        {"kind": "sweep", "csv": "b.csv", "variants": ["baseline"], "layers": ["conv5"], "batches": [1],
        "layouts": ["nchw"], "check": "sampled", "warmup": 1, "repeats": 2})"));
    const fs::path none = dir.path / "none.json";
    cs::test::spit(none, plan_text(R"({"kind": "golden", "batches": [1]})"));
    // run from the repository root: the temporary plans' build steps name its CMake presets
    auto in_root = [](const std::string& a) {
        return cs::test::run_command("cd '" + kRoot.string() + "' && " + std::string(CS_CONVSTUDY_EXE) + " " + a);
    };
    const auto steps = in_root("plan steps --out res --build-dir bd " + two.string());
    CHECK(steps.code == 0);
    CHECK_HAS(steps.out, "bd/convstudy sweep --plan " + two.string() + " --out res\n");
    // bad input: exit 2 before any device is asked for
    const auto no_sweep = in_root("sweep --plan " + none.string());
    CHECK(no_sweep.code == 2);
    CHECK_HAS(no_sweep.out, "has no sweep step");
    CHECK(in_root("sweep --plan " + two.string() + " --csv x.csv").code == 2);
    const auto no_csv = cli("sweep --variants simt-gemm");
    CHECK(no_csv.code == 2);
    CHECK_HAS(no_csv.out, "--csv is required");
    CHECK(cli("sweep --out " + dir.path.string()).code == 2);  // --out needs --plan
    // Both steps parsed, then run in this process: without a GPU exit 4 before the first row; with
    // one, both CSVs written.
    const auto run = in_root("sweep --plan " + two.string() + " --out " + (dir.path / "res").string());
    INFO(run.out);
    if (run.code == 4) {
        CHECK_HAS(run.out, "step 1 of 2");
    } else {
        CHECK(run.code == 0);
        CHECK(fs::exists(dir.path / "res" / "a.csv"));
        CHECK(fs::exists(dir.path / "res" / "b.csv"));
    }
}

TEST_CASE("shell_quote words read back as themselves", "[plans]") {
    for (const std::string w : {"plain", "convstudy@timed kernels/", "it's", "$HOME", "a\"b", "[gpu]", "*", ""}) {
        INFO(w);
        const auto r = cs::test::run_command("printf '%s|' " + shell_quote(w));
        CHECK(r.code == 0);
        CHECK(r.out == w + "|");
    }
}

TEST_CASE("convstudy plan check and plan steps", "[plans][cli]") {
    using cs::test::cli;
    std::string files;
    for (const auto& p : committed_plans()) files += " " + p.string();
    const auto ok = cli("plan check" + files);
    INFO(ok.out);
    CHECK(ok.code == 0);
    CHECK(std::count(ok.out.begin(), ok.out.end(), '\n') == std::ptrdiff_t(committed_plans().size()));
    CHECK_HAS(ok.out, "reference.json: reference: 4 steps (build, golden, sweep, python): ");

    cs::test::TempDir dir;
    const fs::path bad = dir.path / "bad.json";
    cs::test::spit(bad, plan_text(R"({"kind": "sweep", "csv": "a.csv", "batches": [0], "check": "sampled"})"));
    const auto r = cli("plan check --root " + kRoot.string() + " " + (kRoot / "plans" / "goals.json").string() + " " +
                       bad.string());
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "goals.json: goals: ");
    CHECK_HAS(r.out, "bad.json: step 1 (sweep): 'batches': batch size 0 is out of range");

    const auto steps = cli("plan steps --out res --build-dir bd " + (kRoot / "plans" / "reference.json").string());
    CHECK(steps.code == 0);
    CHECK_HAS(steps.out, "0 build build.log 0 cmake --preset device -B bd\n");
    CHECK_HAS(steps.out, "2 sweep step02-sweep.log 0 bd/convstudy sweep --variants all --batch 1,32,128 --layout "
                         "nchw,nhwc --memory pageable --check golden --warmup 3 --repeats 20 --host-repeats 3 --cudnn-processes 3 --csv "
                         "res/reference.csv --quiet\n");
    CHECK(cli("plan steps " + bad.string() + " --root " + kRoot.string()).code == 2);
    CHECK(cli("plan").code == 2);
}

// scripts/sanitize.sh --merge: a sharded sanitizer pass (SANITIZE_SHARD K/N, or a plan's
// "shard") joined into one summary whose TOTAL adds the shards' totals, and refused unless
// every shard of one list is there once.
TEST_CASE("sanitize --merge joins every shard of one list into one total, and refuses a partial set",
          "[plan][sanitize]") {
    cs::test::TempDir dir;
    auto shard = [&](int k, const std::string& total) {
        const fs::path p = dir.path / ("shard" + std::to_string(k) + ".log");
        std::ofstream(p) << "compute-sanitizer over the hand-written variants (2026-01-01T00:00:00Z)\n"
                         << "memory: pageable; 16 jobs at a time; split by variant; shard " << k << "/2 of 5 jobs\n\n"
                         << "memcheck   a/odd    0  yes  3  1/0/0/0  0\n\n"
                         << total << "\n";
        return p.string();
    };
    const std::string clean3 = "TOTAL: 3 jobs; all finished: yes; errors: 0; sweep rows FAIL or ERROR: 0; "
                               "controls caught: yes; wall 30s; result: CLEAN";
    const std::string s1 = shard(1, clean3);
    const std::string s2 = shard(2, "TOTAL: 2 jobs; all finished: yes; errors: 0; sweep rows FAIL or ERROR: 0; "
                                    "controls caught: yes; wall 20s; result: CLEAN");
    const std::string script = "bash " + (kRoot / "scripts/sanitize.sh").string() + " --merge ";
    const fs::path out = dir.path / "merged.log";
    auto r = cs::test::run_command(script + out.string() + " " + s2 + " " + s1);
    CHECK(r.code == 0);
    std::ifstream in(out);
    const std::string merged((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(merged.find("==== shard 1/2") < merged.find("==== shard 2/2"));
    CHECK(merged.find("shard total: 3 jobs") != std::string::npos);
    CHECK(merged.find("\nTOTAL: 5 jobs; all finished: yes; errors: 0; sweep rows FAIL or ERROR: 0; controls caught: yes; "
                      "wall 50s (30 + 20 in 2 shards); result: CLEAN\n") != std::string::npos);
    // One TOTAL line only: the shards' own ones are renamed, so readers of "^TOTAL:" see the sum.
    CHECK(merged.find("\nTOTAL:") == merged.rfind("\nTOTAL:"));

    // A shard with an error makes the whole NOT CLEAN (exit 1), its errors counted.
    const std::string bad2 = shard(2, "TOTAL: 2 jobs; all finished: no (1 not); errors: 4; sweep rows FAIL or ERROR: 1; "
                                      "controls caught: yes; wall 20s; result: NOT CLEAN");
    r = cs::test::run_command(script + out.string() + " " + s1 + " " + bad2);
    CHECK(r.code == 1);
    std::ifstream in2(out);
    const std::string merged2((std::istreambuf_iterator<char>(in2)), std::istreambuf_iterator<char>());
    CHECK(merged2.find("TOTAL: 5 jobs; all finished: no (1 not); errors: 4; sweep rows FAIL or ERROR: 1;") !=
          std::string::npos);
    CHECK(merged2.find("result: NOT CLEAN") != std::string::npos);

    // Refused (exit 2, nothing written): a missing shard, a shard twice, counts that do not add up.
    const fs::path none = dir.path / "none.log";
    r = cs::test::run_command(script + none.string() + " " + s1);
    CHECK(r.code == 2);
    CHECK(r.out.find("every one of 1/2 to 2/2 is needed, once") != std::string::npos);
    r = cs::test::run_command(script + none.string() + " " + s1 + " " + s1);
    CHECK(r.code == 2);
    const std::string overcounted = shard(2, clean3);
    r = cs::test::run_command(script + none.string() + " " + s1 + " " + overcounted);
    CHECK(r.code == 2);
    CHECK(r.out.find("the shards ran 6 jobs, the list has 5") != std::string::npos);
    r = cs::test::run_command(script + none.string() + " " + (dir.path / "missing.log").string());
    CHECK(r.code == 2);
    CHECK(!fs::exists(none));
}

TEST_CASE("an ab step: before, after, before, after per (layer, N), each side merged by its own program, then "
          "compare --again",
          "[plans]") {
    const Plan plan = parse(R"({"kind": "ab", "before": ".ab/convstudy", "csv": "ab.csv", "variants": ["simt-gemm"],
        "layers": ["conv2", "conv3"], "batches": [32, 128], "layouts": ["nchw"], "check": "sampled",
        "flags": ["--no-recheck"], "timeout_s": 120})");
    const auto steps = step_commands(plan, "res", "bd");
    REQUIRE(steps.size() == 2);
    CHECK(steps[1].log == "step01-ab.log");
    CHECK(steps[1].timeout_s == 120);
    const auto& cmds = steps[1].commands;
    using V = std::vector<std::string>;
    REQUIRE(cmds.size() == 2 + 2 * 2 * 4 + 4 + 1);
    CHECK(cmds[0].back() == ".ab/convstudy");  // the before program must be there: exit 2 naming it otherwise
    CHECK(cmds[1] == V{"mkdir", "-p", "res/ab.parts"});
    CHECK(cmds[2] == V{".ab/convstudy", "sweep", "--variants", "simt-gemm", "--layers", "conv2", "--batch", "32",
                       "--layout", "nchw", "--memory", "pageable", "--check", "sampled", "--warmup", "3", "--repeats",
                       "20", "--no-recheck", "--csv", "res/ab.parts/before1_conv2_n32.csv", "--quiet"});
    // per (layer, N): before 1, after 1, before 2, after 2, each a process of its own
    const V order{"before1_conv2_n32", "after1_conv2_n32", "before2_conv2_n32", "after2_conv2_n32",
                  "before1_conv2_n128", "after1_conv2_n128", "before2_conv2_n128", "after2_conv2_n128",
                  "before1_conv3_n32"};
    for (std::size_t i = 0; i < order.size(); ++i) {
        CHECK(cmds[2 + i][0] == (order[i][0] == 'b' ? ".ab/convstudy" : "bd/convstudy"));
        CHECK(cmds[2 + i][cmds[2 + i].size() - 2] == "res/ab.parts/" + order[i] + ".csv");
    }
    CHECK(cmds[18] == V{".ab/convstudy", "merge", "res/ab.parts/before1_conv2_n32.csv",
                        "res/ab.parts/before1_conv2_n128.csv", "res/ab.parts/before1_conv3_n32.csv",
                        "res/ab.parts/before1_conv3_n128.csv", "-o", "res/ab.before1.csv"});
    CHECK(cmds[19][0] == "bd/convstudy");
    CHECK(cmds[19].back() == "res/ab.after1.csv");
    CHECK(cmds[22] == V{"bd/convstudy", "compare", "res/ab.before1.csv", "res/ab.after1.csv", "--again",
                        "res/ab.before2.csv", "res/ab.after2.csv", "--csv", "res/ab.csv"});

    const std::string ab = R"({"kind": "ab", "before": ".ab/convstudy", "csv": "ab.csv", "variants": ["simt-gemm"],
        "check": "sampled")";
    CHECK(error_of(R"({"kind": "ab", "before": "/tmp/convstudy", "csv": "ab.csv", "check": "sampled"})")
              .find("step 1 (ab): 'before': '/tmp/convstudy' must be a path inside the repository") != std::string::npos);
    CHECK(error_of(R"({"kind": "ab", "csv": "ab.csv", "check": "sampled"})").find("step 1 (ab): 'before'") !=
          std::string::npos);
    CHECK(error_of(ab + R"(, "flags": ["--shard", "1/2"]})").find("'flags': --shard does not go with an A/B") !=
          std::string::npos);
    CHECK(error_of(ab + R"(, "kernels_csv": "k.csv"})").find("'kernels_csv': unknown key") != std::string::npos);
    CHECK(error_of(ab + "}, " + R"({"kind": "sweep", "csv": "ab.after2.csv", "check": "sampled"})")
              .find("'ab.after2.csv' is written by an earlier step too") != std::string::npos);
}

TEST_CASE("a tune step becomes convstudy tune with its table, tasks, budget and file", "[plans]") {
    const Plan plan = parse(R"({"kind": "tune", "table": "vgg16", "batches": [32, 128], "classes": ["fp16", "tf32"],
        "layouts": ["nhwc"], "budget_s": 300, "shard": "2/4", "output": "h200_vgg16.json", "timeout_s": 400})");
    const auto steps = step_commands(plan, "res", "bd");
    REQUIRE(steps.size() == 2);
    CHECK(steps[1].log == "step01-tune.log");
    CHECK(steps[1].timeout_s == 400);
    using V = std::vector<std::string>;
    CHECK(steps[1].commands == std::vector<V>{{"bd/convstudy", "tune", "--table", "vgg16", "--batch", "32,128",
                                               "--classes", "fp16,tf32", "--layout", "nhwc", "--budget", "300",
                                               "--warmup", "3", "--repeats", "10", "--shard", "2/4", "-o",
                                               "res/h200_vgg16.json"}});
    // every layout when the plan names none; one shard: no --shard
    const auto all = step_commands(parse(R"({"kind": "tune", "output": "t.json"})"), "res", "bd");
    const V& cmd = all[1].commands.front();
    CHECK(std::find(cmd.begin(), cmd.end(), "--shard") == cmd.end());
    const auto layout = std::find(cmd.begin(), cmd.end(), "--layout");
    REQUIRE(layout != cmd.end());
    CHECK(*(layout + 1) == "nchw,nhwc");
    CHECK(error_of(R"({"kind": "tune", "output": "t.json", "classes": ["fp9"]})")
              .find("step 1 (tune): 'classes': unknown precision class 'fp9'") != std::string::npos);
    CHECK(error_of(R"({"kind": "tune", "output": "t.csv"})").find("'output': 't.csv' must end in .json") !=
          std::string::npos);
    CHECK(error_of(R"({"kind": "tune", "output": "t.json", "repeats": 5})").find("'repeats'") != std::string::npos);
    CHECK(error_of(R"({"kind": "tune", "output": "t.json", "shard": "3/2"})").find("'shard'") != std::string::npos);
    CHECK(error_of(R"({"kind": "tune"})").find("'output'") != std::string::npos);
}

TEST_CASE("gpus: a sweep's rows and a tune's tasks as shards at once, one per GPU, then merged", "[plans]") {
    const Plan plan = parse(R"({"kind": "sweep", "csv": "a.csv", "variants": ["simt-gemm"], "batches": [32],
        "layouts": ["nchw"], "check": "sampled", "gpus": 2},
        {"kind": "tune", "batches": [32], "classes": ["fp16"], "layouts": ["nhwc"], "budget_s": 60,
         "output": "t.json", "gpus": 2})");
    const auto steps = step_commands(plan, "res", "bd");
    REQUIRE(steps.size() == 3);
    using V = std::vector<std::string>;
    const auto& sw = steps[1].commands;
    REQUIRE(sw.size() == 4);
    for (int k = 0; k < 2; ++k) {
        INFO(k);
        const V& c = sw[std::size_t(k)];
        REQUIRE(c.size() > 4);
        CHECK(c[0] == kGpuParallel);
        CHECK(V(c.begin() + 1, c.begin() + 4) == V{"env", "CUDA_VISIBLE_DEVICES=" + std::to_string(k), "bd/convstudy"});
        const auto shard = std::find(c.begin(), c.end(), "--shard");
        REQUIRE(shard != c.end());
        CHECK(*(shard + 1) == std::to_string(k + 1) + "/2");
        const auto csv = std::find(c.begin(), c.end(), "--csv");
        REQUIRE(csv != c.end());
        CHECK(*(csv + 1) == "res/a.gpu" + std::to_string(k + 1) + ".csv");
    }
    CHECK(sw[2] == V{kGpuWait});
    CHECK(sw[3] == V{"bd/convstudy", "merge", "res/a.gpu1.csv", "res/a.gpu2.csv", "-o", "res/a.csv"});
    const auto& tu = steps[2].commands;
    REQUIRE(tu.size() == 4);
    CHECK(tu[1] == V{kGpuParallel, "env", "CUDA_VISIBLE_DEVICES=1", "bd/convstudy", "tune", "--batch", "32",
                     "--classes", "fp16", "--layout", "nhwc", "--budget", "60", "--warmup", "3", "--repeats", "10",
                     "--shard", "2/2", "-o", "res/t.gpu2.json"});
    CHECK(tu[2] == V{kGpuWait});
    CHECK(tu[3] == V{"bd/convstudy", "tune", "merge", "res/t.gpu1.json", "res/t.gpu2.json", "-o", "res/t.json"});
    // one GPU: the plain command; shards of its own or a profile beside gpus are refused; at most kMaxPlanGpus
    CHECK(step_commands(parse(R"({"kind": "tune", "output": "t.json", "gpus": 1})"), "res", "bd")[1].commands.size() ==
          1);
    CHECK(error_of(R"({"kind": "tune", "output": "t.json", "gpus": 2, "shard": "1/2"})").find("'gpus'") !=
          std::string::npos);
    CHECK(error_of(R"({"kind": "sweep", "csv": "a.csv", "check": "sampled", "gpus": 2, "flags": ["--shard", "1/2"]})")
              .find("'gpus'") != std::string::npos);
    CHECK(error_of(R"({"kind": "tune", "output": "t.json", "gpus": 9})").find("'gpus'") != std::string::npos);
    // sweep --plan runs one process: it refuses such a step
    CHECK_HAS(error_message([&] { sweep_steps(plan, "res"); }), "run the plan with scripts/device.sh");
}

TEST_CASE("a chain step becomes convstudy chain, its golden sets made by an earlier golden step with chain",
          "[plans]") {
    const std::string golden = R"({"kind": "golden", "table": "alexnet", "batches": [1, 32], "chain": true},)";
    const Plan plan = parse(golden + R"({"kind": "chain", "batches": [1, 32], "classes": ["fp16", "bf16"],
        "layouts": ["nchw"], "csv": "c.csv", "tail_repeats": 300, "timeout_s": 200})");
    const auto steps = step_commands(plan, "res", "bd");
    REQUIRE(steps.size() == 3);
    using V = std::vector<std::string>;
    CHECK(steps[1].commands == std::vector<V>{{"bd/convstudy", "generate", "--batch", "1,32", "--chain", "--out",
                                               "golden", "--quiet"}});
    CHECK(steps[2].log == "step02-chain.log");
    CHECK(steps[2].commands == std::vector<V>{{"bd/convstudy", "chain", "--batch", "1,32", "--classes", "fp16,bf16",
                                               "--layout", "nchw", "--choice", "auto", "--sides", "ours,cudnn",
                                               "--golden", "golden", "--warmup", "3", "--repeats", "20",
                                               "--layer-repeats", "20", "--csv", "res/c.csv", "--tail-repeats",
                                               "300"}});
    // the sets must be made first, for every N; a table that is not a chain; the check's fields
    CHECK(error_of(R"({"kind": "chain", "csv": "c.csv"})")
              .find("'batches': no earlier golden step with chain true makes alexnet's chain at N=1") !=
          std::string::npos);
    CHECK(error_of(golden + R"({"kind": "chain", "batches": [128], "csv": "c.csv"})").find("at N=128") !=
          std::string::npos);
    CHECK(error_of(R"({"kind": "chain", "table": "resnet50", "csv": "c.csv"})").find("is not a chain") !=
          std::string::npos);
    CHECK(error_of(R"({"kind": "golden", "table": "vgg16", "batches": [1], "chain": true})").find("is not a chain") !=
          std::string::npos);
    CHECK(error_of(R"({"kind": "golden", "batches": [1], "chain": true, "layers": ["conv1"]})")
              .find("leave out layers") != std::string::npos);
    CHECK(error_of(golden + R"({"kind": "chain", "classes": ["fp16acc"], "csv": "c.csv"})").find("'classes'") !=
          std::string::npos);
    CHECK(error_of(golden + R"({"kind": "chain", "sides": ["pytorch"], "csv": "c.csv"})").find("'sides'") !=
          std::string::npos);
    CHECK(error_of(golden + R"({"kind": "chain", "choice": "no-such-row", "csv": "c.csv"})").find("'choice'") !=
          std::string::npos);
    CHECK(error_of(golden + R"({"kind": "chain", "repeats": 5, "csv": "c.csv"})").find("'repeats'") !=
          std::string::npos);
    CHECK(error_of(golden + R"({"kind": "chain"})").find("'csv'") != std::string::npos);
    // pdl false: the A/B run without programmatic dependent launches
    const auto nopdl = step_commands(parse(golden + R"({"kind": "chain", "csv": "c.csv", "pdl": false})"), "res", "bd");
    CHECK(nopdl[2].commands[0].back() == "--no-pdl");
    CHECK(error_of(golden + R"({"kind": "chain", "csv": "c.csv", "pdl": "no"})").find("'pdl'") != std::string::npos);
    // tuning: a tune step's output (in the output folder) or a file of the tree, else an error
    const auto tuned = step_commands(parse(golden + R"({"kind": "tune", "layers": ["conv1"], "output": "t1.json"},
        {"kind": "chain", "csv": "c.csv", "tuning": "t1.json"})"), "res", "bd");
    const V& tc = tuned[3].commands[0];
    CHECK(std::find(tc.begin(), tc.end(), "--tuning") + 1 == std::find(tc.begin(), tc.end(), "res/t1.json"));
    const auto tree = step_commands(parse(golden + R"({"kind": "chain", "csv": "c.csv", "tuning": "tuning/h200.json"})"),
                                    "res", "bd");
    CHECK(std::find(tree[2].commands[0].begin(), tree[2].commands[0].end(), "tuning/h200.json") !=
          tree[2].commands[0].end());
    CHECK(error_of(golden + R"({"kind": "chain", "csv": "c.csv", "tuning": "no/such.json"})")
              .find("'tuning': 'no/such.json' is neither an earlier step's output nor a file of the tree") !=
          std::string::npos);
    // the sanitizer's chain target runs alexnet's chain at N=1: its golden set must be made first
    const auto san = step_commands(parse(golden + R"({"kind": "sanitize", "targets": ["chain", "odd"]})"), "res", "bd");
    CHECK(std::find(san[2].commands[0].begin(), san[2].commands[0].end(), "SANITIZE_TARGETS=chain odd") !=
          san[2].commands[0].end());
    CHECK(error_of(R"({"kind": "sanitize", "targets": ["chain"]})")
              .find("'targets': chain, but no earlier golden step with chain true makes alexnet's chain at N=1") !=
          std::string::npos);
    CHECK(error_of(R"({"kind": "golden", "table": "alexnet", "batches": [32], "chain": true},
                      {"kind": "sanitize", "targets": ["chain"]})")
              .find("alexnet's chain at N=1") != std::string::npos);
}

TEST_CASE("the runner's STEPS picks sweep steps of a plan whose sweeps run in one process", "[plans]") {
    const Plan plan = parse(R"({"kind": "sweep", "csv": "a.csv", "variants": ["simt-gemm"], "check": "sampled",
                                "timeout_s": 10},
        {"kind": "sweep", "csv": "b.csv", "variants": ["simt-gemm"], "check": "sampled", "timeout_s": 20},
        {"kind": "sweep", "csv": "c.csv", "variants": ["simt-gemm"], "check": "sampled", "timeout_s": 40})");
    REQUIRE(sweeps_in_one_process(plan));
    // all: the first sweep step carries the process
    const auto all = step_commands(plan, "res", "bd");
    CHECK(all[1].commands.size() == 1);
    CHECK(all[2].commands.empty());
    CHECK(all[1].timeout_s == 70);
    // STEPS=3: the selected step carries it, naming only itself (before: the skipped step 1 held it)
    const auto three = step_commands(plan, "res", "bd", {3});
    CHECK(three[1].commands.empty());
    REQUIRE(three[3].commands.size() == 1);
    const auto& cmd = three[3].commands.front();
    REQUIRE(cmd.size() >= 2);
    CHECK(cmd[cmd.size() - 2] == "--steps");
    CHECK(cmd.back() == "3");
    CHECK(three[3].timeout_s == 40);
    const auto two = step_commands(plan, "res", "bd", {0, 2, 3});
    REQUIRE(two[2].commands.size() == 1);
    CHECK(two[2].commands.front().back() == "2,3");
    CHECK(two[2].timeout_s == 60);
    CHECK(two[3].commands.empty());
}

TEST_CASE("a profile step of mode timeline runs the row with --timeline into the output folder", "[plans]") {
    const Plan plan = parse(R"({"kind": "profile", "mode": "timeline", "variant": "simt-gemm", "layer": "conv2",
        "batch": 1, "layout": "nchw", "repeats": 200, "output": "t.csv"})");
    const auto steps = step_commands(plan, "res", "bd");
    REQUIRE(steps.size() == 2);
    using V = std::vector<std::string>;
    CHECK(steps[1].commands ==
          std::vector<V>{{"bd/convstudy", "run", "--variant", "simt-gemm", "--layer", "conv2", "--batch", "1", "--layout",
                          "nchw", "--memory", "pageable", "--check", "sampled", "--no-cpu-timing", "--warmup", "2",
                          "--repeats", "200", "--timeline", "res/t.csv"}});
    // its output is the timeline's CSV: no ncu options, metrics or kernels CSV, a .csv name
    for (const char* extra : {R"("ncu_args": ["--csv"])", R"("metrics": "default")", R"("kernels_csv": "k.csv")"})
        CHECK_HAS(error_message([&] {
                      parse(std::string(R"({"kind": "profile", "mode": "timeline", "variant": "simt-gemm", )"
                                        R"("layer": "conv2", "output": "t.csv", )") +
                            extra + "}");
                  }),
                  "not for mode timeline");
    CHECK_HAS(error_message([] {
                  parse(R"({"kind": "profile", "mode": "timeline", "variant": "simt-gemm", "layer": "conv2",
                      "output": "t.txt"})");
              }),
              "output");
    CHECK_HAS(error_message([] {
                  parse(R"({"kind": "profile", "mode": "trace", "variant": "simt-gemm", "layer": "conv2",
                      "output": "t.csv"})");
              }),
              "valid: convstudy, ncu, timeline");
}
