// `convstudy profile` without a GPU: parsing Nsight Compute's CSV (both of its layouts),
// aggregating a row's kernels, and the errors for a missing ncu and bad arguments.
// tests/data/ncu_details_sample.csv (--csv --print-units base) and ncu_raw_sample.csv
// (--csv --page raw, units under the header) are in ncu's two CSV layouts, written by hand
// in that format: their values are plausible, not measured; ncu_details_h100_ws_conv2.csv is
// a real one (ncu_raw_conv2.csv of plans/profile.json's ncu step, from an H100).
#include "test_util.hpp"

#include "profile.hpp"

#include <cmath>

using namespace cs;
using namespace cs::cli;
namespace fs = std::filesystem;
using cs::test::error_message;
using cs::test::slurp;

namespace {
const std::string kData = std::string(CS_SOURCE_DIR) + "/tests/data/";
}

TEST_CASE("ncu's details CSV: kernels, base units and thousands separators", "[profile]") {
    const auto ks = parse_ncu_csv(slurp(kData + "ncu_details_sample.csv"), "sample");
    REQUIRE(ks.size() == 2);
    CHECK(ks[0].id == 0);
    CHECK(ks[0].name == "nchwToNhwcKernel");
    CHECK(ks[1].name.rfind("sm90_xmma_fprop_implicit_gemm", 0) == 0);
    CHECK(ks[0].get("dram__bytes_read.sum") == 17915904.0);
    CHECK(ks[1].get("gpu__time_duration.sum") == 160992.0);
    CHECK(ks[1].get("launch__shared_mem_per_block_dynamic") == 215040.0);
    CHECK(ks[1].get("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active") == Approx(78.64));
    CHECK(ks[1].get("sm__inst_executed_pipe_tensor_op_gmma.sum") == 1166400.0);  // unit "inst"
    CHECK(std::isnan(ks[0].get("no__such_metric.sum")));
}

// Measured, not written by hand: ncu 2025 on an H100 (the ncu step of plans/profile.json, then a script at 4f737dc,
// hopper-ws-fp16 on conv2 N=128, filtered by the NVTX range), with ncu's own banner lines and
// the NVTX push/pop and start/stop columns that the filter adds.
TEST_CASE("ncu's details CSV as an H100 wrote it: NVTX columns, banner lines, a wgmma kernel", "[profile]") {
    const auto ks = parse_ncu_csv(slurp(kData + "ncu_details_h100_ws_conv2.csv"), "h100");
    REQUIRE(ks.size() == 1);
    CHECK(ks[0].name.find("ws_kernel<__half, 9, 0, EpiDirect, __half, 0, 1>") != std::string::npos);
    CHECK(ks[0].get("dram__bytes_read.sum") == 19322624.0);
    CHECK(ks[0].get("gpu__time_duration.sum") == 234464.0);
    CHECK(ks[0].get("launch__registers_per_thread") == 168.0);
    CHECK(ks[0].get("sm__inst_executed_pipe_tensor_op_gmma.sum") == 874800.0);
    CHECK(ks[0].get("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active") == Approx(59.91));
    const ProfileSummary s = aggregate(ks, "default");
    CHECK(s.kernels == 1);
    CHECK(s.time_ms == Approx(0.234464));
    CHECK(s.tensor_pct == Approx(59.91));
    CHECK(s.gmma_pct == Approx(59.91));  // it issued wgmma: its tensor cycles are gmma's
    CHECK(s.hmma_pct == 0.0);
    CHECK(s.registers == 168.0);
}

TEST_CASE("ncu's raw page CSV: the units line converts to bytes and nanoseconds", "[profile]") {
    const auto ks = parse_ncu_csv(slurp(kData + "ncu_raw_sample.csv"), "raw");
    REQUIRE(ks.size() == 1);
    CHECK(ks[0].name == "simt_gemm_kernel");
    CHECK(ks[0].get("dram__bytes_read.sum") == Approx(38.52e6));
    CHECK(ks[0].get("gpu__time_duration.sum") == Approx(2431.65e3));
    CHECK(ks[0].get("launch__registers_per_thread") == 128.0);
    CHECK(ks[0].values.count("Kernel Name") == 0);
}

TEST_CASE("aggregate: bytes summed, percentages weighted by time, L2 by sectors", "[profile]") {
    const auto ks = parse_ncu_csv(slurp(kData + "ncu_details_sample.csv"), "sample");
    const ProfileSummary s = aggregate(ks, "default");
    CHECK(s.kernels == 2);
    CHECK(s.main_kernel == ks[1].name);  // the longest kernel
    CHECK(s.time_ms == Approx((14528.0 + 160992.0) * 1e-6));
    CHECK(s.dram_read_bytes == 17915904.0 + 24530176.0);
    CHECK(s.dram_write_bytes == 17891328.0 + 47775744.0);
    const double w0 = 14528, w1 = 160992;
    CHECK(s.sm_pct == Approx((21.47 * w0 + 79.33 * w1) / (w0 + w1)));
    CHECK(s.occupancy_pct == Approx((81.9 * w0 + 18.66 * w1) / (w0 + w1)));
    // the tensor pipe weighted by time; the xmma kernel issued wgmma, so its cycles are gmma's
    CHECK(s.tensor_pct == Approx(78.64 * w1 / (w0 + w1)));
    CHECK(s.gmma_pct == Approx(78.64 * w1 / (w0 + w1)));
    CHECK(s.hmma_pct == 0.0);
    const double s0 = 1678080, s1 = 14532608;
    CHECK(s.l2_hit_pct == Approx((38.12 * s0 + 86.41 * s1) / (s0 + s1)));
    CHECK(s.registers == 168.0);
    CHECK(s.smem_bytes == 215040.0);
    CHECK(std::isnan(s.waves));  // not in the default set
    const auto f = profile_fields(s);
    REQUIRE(f.size() == profile_columns().size());
    CHECK(f[0] == "default");
    CHECK(f[1] == "2");
    CHECK(f[9] == "42446080");  // ncu_dram_read_bytes
    CHECK(profile_fields(std::nullopt) == std::vector<std::string>(profile_columns().size()));
}

TEST_CASE("aggregate: the tensor pipe's cycles split by the wgmma instruction counter", "[profile]") {
    const std::string dur = "gpu__time_duration.sum";
    const std::string pipe = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active";
    const std::string hmma = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active";
    const std::string gmma = "sm__inst_executed_pipe_tensor_op_gmma.sum";
    // sm_90: a wgmma kernel (its cycles in the HMMA sub-pipe too) and an mma.sync kernel
    const KernelMetrics wg{0, "ws_kernel", {{dur, 300.0}, {pipe, 72.0}, {hmma, 72.0}, {gmma, 4096.0}}};
    const KernelMetrics ms{1, "split_tf32_kernel", {{dur, 100.0}, {pipe, 40.0}, {hmma, 40.0}, {gmma, 0.0}}};
    ProfileSummary s = aggregate({wg, ms}, "default");
    CHECK(s.tensor_pct == Approx((72.0 * 300 + 40.0 * 100) / 400));
    CHECK(s.gmma_pct == Approx(72.0 * 300 / 400));
    CHECK(s.hmma_pct == Approx(40.0 * 100 / 400));
    // before sm_90 there is no wgmma counter: every tensor cycle is mma.sync's, gmma empty
    const KernelMetrics old{0, "wmma_kernel", {{dur, 100.0}, {pipe, 55.0}, {hmma, 55.0}}};
    s = aggregate({old}, "default");
    CHECK(s.tensor_pct == Approx(55.0));
    CHECK(s.hmma_pct == Approx(55.0));
    CHECK(std::isnan(s.gmma_pct));
    CHECK(profile_fields(s)[6].empty());  // ncu_gmma_pct
}

TEST_CASE("ncu output without its CSV is refused with the source named", "[profile]") {
    CHECK_HAS(error_message([] { parse_ncu_csv("==ERROR== ERR_NVGPUCTRPERM\n", "ncu's output"); }),
              "ncu's output: no Nsight Compute CSV");
    CHECK_HAS(error_message([] { parse_ncu_csv("\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Value\"\n\"x\",\"k\",\"m\",\"1\"\n", "bad"); }),
              "bad kernel ID");
    CHECK_HAS(error_message([] { parse_ncu_csv("\"ID\",\"Kernel Name\"\n\"0\",\"k\",\"extra\"\n", "ragged"); }),
              "has 3 fields, the header has 2");
    CHECK(aggregate({}, "default").kernels == 0);
}

TEST_CASE("metric sets and the ncu lookup", "[profile]") {
    CHECK(metric_set("default").size() < metric_set("detailed").size());
    CHECK_HAS(error_message([] { metric_set("everything"); }), "valid sets: default, detailed");
    CHECK_HAS(error_message([] { find_ncu("/nonexistent/ncu"); }), "--ncu /nonexistent/ncu: no such executable");
    CHECK_HAS(error_message([] { find_ncu("/nonexistent/ncu"); }), "CUDA toolkit");
}

TEST_CASE("profile: a missing ncu exits 5 with the fix, before any device is needed", "[profile][cli]") {
    const auto r = cs::test::cli("profile --variant cudnn-fp16 --layer conv2 --batch 1 --ncu /nonexistent/ncu");
    INFO(r.out);
    CHECK(r.code == 5);
    CHECK_HAS(r.out, "no such executable");
    CHECK_HAS(r.out, "put its bin directory on PATH");
    const auto e = cs::test::cli("profile --variant cudnn-fp16 --layer conv2 --batch 1");
    INFO(e.out);
    if (e.code == 5) CHECK_HAS(e.out, "Nsight Compute (ncu) was not found");  // machines without ncu
    const cs::test::TempDir d;
    const auto s = cs::test::run_command("CONVSTUDY_NCU=/nonexistent/ncu " + std::string(CS_CONVSTUDY_EXE) +
                                         " sweep --profile --check sampled --csv " + (d.path / "x.csv").string());
    INFO(s.out);
    CHECK(s.code == 5);
    CHECK_HAS(s.out, "CONVSTUDY_NCU=/nonexistent/ncu");
}

TEST_CASE("profile and sweep --profile: argument errors exit 2", "[profile][cli]") {
    auto r = cs::test::cli("profile --variant cudnn-fp16 --layer conv2 --batch 1 --metrics everything --ncu /nonexistent/ncu");
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "unknown metric set 'everything'");
    r = cs::test::cli("profile --variant nosuch --layer conv2 --batch 1");
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "unknown variant 'nosuch'");
    r = cs::test::cli("profile --layer conv2 --batch 1");
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "--variant is required");
    r = cs::test::cli("profile --variant cudnn-fp16 --layer conv9 --batch 1");
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "unknown layer 'conv9'");
    r = cs::test::cli("profile --variant cudnn-fp16 --layer conv2 --batch 1 --profile-timeout 1");
    CHECK(r.code == 2);
    r = cs::test::cli("profile --variant cudnn-fp16 --layer conv2 --batch 1 --ncu /nonexistent/ncu --kernels-csv /nonexistent/dir/k.csv");
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "--kernels-csv");
}
