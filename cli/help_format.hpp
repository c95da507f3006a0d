// How convstudy prints --help: CLI11's layout (option names and types on the left, the
// description from column 30) with every line at most kHelpColumns wide — descriptions and
// footers wrapped at spaces, continuation lines under their column — and no default shown
// beside a required option (CLI11 alone prints `--batch INT=0 REQUIRED`).
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <string>

namespace cs::cli {

inline constexpr std::size_t kHelpColumns = 100;

// `text` with each of its lines broken at spaces into lines of at most `width` characters.
// A line's leading spaces are kept; the continuation lines of an indented line get two more
// (a list item hangs), those of an unindented line none. A word longer than the width stays
// whole on a line of its own.
std::string wrap_text(const std::string& text, std::size_t width);

class HelpFormatter : public CLI::Formatter {
public:
    std::string make_option(const CLI::Option* opt, bool is_positional) const override;
    std::string make_option_opts(const CLI::Option* opt) const override;
    std::string make_subcommand(const CLI::App* sub) const override;
    std::string make_description(const CLI::App* app) const override;
    std::string make_footer(const CLI::App* app) const override;
};

}  // namespace cs::cli
