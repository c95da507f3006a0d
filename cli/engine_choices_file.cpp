#include "engine_choices_file.hpp"

#include "atomic_file.hpp"
#include "engine_choice.hpp"
#include "error.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace cs::cli {

namespace {
constexpr const char* kFormat = "convstudy engine choices 1";
}

void load_engine_choices(const std::filesystem::path& path, gpu::EngineChoices& memory) {
    std::map<std::string, gpu::RememberedEngine> m;
    std::error_code ec;
    if (path.empty() || !std::filesystem::exists(path, ec)) {
        memory.replace(std::move(m));
        return;
    }
    const std::string what = "engine choices file " + path.string();
    std::ifstream f(path, std::ios::binary);
    if (!f) throw Error("cannot read the " + what);
    std::stringstream ss;
    ss << f.rdbuf();
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(ss.str());
    } catch (const nlohmann::json::exception& e) {
        throw Error("the " + what + " is not valid JSON (" + e.what() + "); delete it or pass --engine-choices none");
    }
    if (!j.is_object() || j.value("format", std::string()) != kFormat || !j.contains("choices") ||
        !j["choices"].is_object())
        throw Error("the " + what + " is not a convstudy engine choices file (format \"" + kFormat +
                    "\" expected); delete it or pass --engine-choices none");
    for (const auto& [key, v] : j["choices"].items()) {
        if (!v.is_object() || !v.contains("engine") || !v["engine"].is_number_integer() || !v.contains("ms") ||
            !v["ms"].is_number())
            throw Error("the " + what + " has a malformed entry '" + key + "' (needs integer \"engine\" and number \"ms\")");
        gpu::RememberedEngine e{v["engine"].get<std::int64_t>(), v["ms"].get<double>(), std::nullopt};
        if (v.contains("knobs")) {
            const auto& k = v["knobs"];
            auto pair_ok = [](const nlohmann::json& p) {
                return p.is_array() && p.size() == 2 && p[0].is_number_integer() && p[1].is_number_integer();
            };
            if (!k.is_array() || !std::all_of(k.begin(), k.end(), pair_ok))
                throw Error("the " + what + " has a malformed entry '" + key +
                            "' (\"knobs\" must be a list of [knob type, value] integer pairs)");
            e.knobs.emplace();
            for (const auto& p : k) e.knobs->emplace_back(p[0].get<int>(), p[1].get<std::int64_t>());
            std::sort(e.knobs->begin(), e.knobs->end());
        }
        m[key] = std::move(e);
    }
    memory.replace(std::move(m));
}

void save_engine_choices(const std::filesystem::path& path, gpu::EngineChoices& memory) {
    if (path.empty() || !memory.changed()) return;
    nlohmann::json j;
    j["format"] = kFormat;
    j["about"] =
        "cuDNN engines chosen before, per device, cuDNN version, layer, batch, layout and class: a later run keeps "
        "the engine while it times within 3% of the fastest (bench/engine_choice.hpp). Delete the file or pass "
        "--engine-choices none to choose afresh.";
    nlohmann::json c = nlohmann::json::object();
    for (const auto& [key, e] : memory.all()) {
        c[key] = {{"engine", e.engine}, {"ms", e.ms}};
        if (e.knobs) {
            nlohmann::json k = nlohmann::json::array();
            for (const auto& [type, value] : *e.knobs) k.push_back({type, value});
            c[key]["knobs"] = std::move(k);
        }
    }
    j["choices"] = std::move(c);
    write_file_atomic(path, j.dump(1) + "\n");
    memory.mark_saved();
}

std::filesystem::path engine_choices_path(const std::string& option, const std::string& golden_root) {
    if (option == "none") return {};
    if (!option.empty()) return option;
    std::error_code ec;
    if (!std::filesystem::is_directory(golden_root, ec)) return {};
    return std::filesystem::path(golden_root) / "engine_choices.json";
}

}  // namespace cs::cli
