#include "help_format.hpp"

#include <sstream>
#include <vector>

namespace cs::cli {

std::string wrap_text(const std::string& text, std::size_t width) {
    std::string out;
    std::istringstream lines(text);
    std::string line;
    bool first_line = true;
    while (std::getline(lines, line)) {
        if (!first_line) out += '\n';
        first_line = false;
        const std::size_t lead = line.find_first_not_of(' ');
        if (lead == std::string::npos) continue;  // a blank line stays blank
        std::vector<std::string> words;
        std::istringstream ws(line.substr(lead));
        for (std::string w; ws >> w;) words.push_back(w);
        std::string cur(lead, ' ');
        const std::size_t hang = lead == 0 ? 0 : lead + 2;  // an indented line's list items hang
        bool empty = true;  // `cur` holds no word yet
        for (const auto& w : words) {
            if (!empty && cur.size() + 1 + w.size() > width) {
                out += cur + '\n';
                cur = std::string(hang, ' ');
                empty = true;
            }
            cur += (empty ? "" : " ") + w;
            empty = false;
        }
        out += cur;
    }
    return out;
}

namespace {

// `left` in a column of `column` characters and `desc` wrapped to the right of it, as
// CLI11's detail::format_help lays them out (left on a line of its own when it is too wide).
std::string two_columns(const std::string& left, const std::string& desc, std::size_t column) {
    std::string out = "  " + left;
    if (desc.empty()) return out + '\n';
    if (out.size() >= column) {
        out += '\n' + std::string(column, ' ');
    } else {
        out += std::string(column - out.size(), ' ');
    }
    const std::string body = wrap_text(desc, kHelpColumns - column);
    for (char c : body) {
        out += c;
        if (c == '\n') out += std::string(column, ' ');
    }
    return out + '\n';
}

}  // namespace

std::string HelpFormatter::make_option(const CLI::Option* opt, bool is_positional) const {
    return two_columns(make_option_name(opt, is_positional) + make_option_opts(opt), make_option_desc(opt),
                       get_column_width());
}

std::string HelpFormatter::make_option_opts(const CLI::Option* opt) const {
    // CLI11's text, less the default of a required option (it never applies) and the empty
    // list of a repeatable option that starts empty ("=[]" says nothing).
    std::string s = CLI::Formatter::make_option_opts(opt);
    const std::string d = "=" + opt->get_default_str();
    if ((opt->get_required() || d == "=[]") && d != "=" && opt->get_option_text().empty()) {
        const auto at = s.find(d);
        if (at != std::string::npos) s.erase(at, d.size());
    }
    return s;
}

std::string HelpFormatter::make_subcommand(const CLI::App* sub) const {
    return two_columns(sub->get_display_name(true), sub->get_description(), get_column_width());
}

std::string HelpFormatter::make_description(const CLI::App* app) const {
    const std::string d = CLI::Formatter::make_description(app);
    return d.empty() ? d : wrap_text(d, kHelpColumns) + '\n';
}

std::string HelpFormatter::make_footer(const CLI::App* app) const {
    const std::string f = CLI::Formatter::make_footer(app);
    return f.empty() ? f : wrap_text(f, kHelpColumns) + '\n';
}

}  // namespace cs::cli
