// `convstudy list --markdown`: the registry as docs/variants.md's table. Its own file so that the
// CPU test that checks the document links the registry alone, not the rest of `list`.
#include "command_common.hpp"

#include "join.hpp"

namespace cs::cli::detail {

std::string variants_markdown() {
    const auto cell = [](std::string s) {
        for (std::size_t at = 0; (at = s.find('|', at)) != std::string::npos; at += 2) s.replace(at, 1, "\\|");
        return s;
    };
    std::string s = "| variant | family | ladder | rung | class | layouts | axes | idea |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n";
    for (const auto& v : gpu::registry()) {
        const std::string axes = join(v.axes, ", ", [](const gpu::Axis& a) -> const std::string& { return a.name; });
        s += "| `" + v.name + "` | " + v.family + " | " + v.ladder + " | " + v.rung + " | " +
             std::string(gpu::to_string(v.precision)) + " | " +
             join(v.layouts, ", ", [](gpu::Layout l) { return gpu::to_string(l); }) + " | " + (axes.empty() ? "-" : axes) +
             " | " + cell(v.idea + (v.deterministic ? "" : " (order-dependent)")) + " |\n";
    }
    return s;
}

}  // namespace cs::cli::detail
