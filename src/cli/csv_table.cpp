#include "csv_table.hpp"

#include "error.hpp"

#include <fstream>
#include <sstream>

namespace cs::cli {

std::vector<std::vector<std::string>> parse_csv_records(const std::string& text, const std::string& where) {
    std::vector<std::vector<std::string>> out;
    std::vector<std::string> rec;
    std::string field;
    bool quoted = false, any = false;
    std::size_t line = 1, start_line = 1;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"') {
                if (i + 1 < text.size() && text[i + 1] == '"') {
                    field += '"';
                    ++i;
                } else {
                    quoted = false;
                }
            } else {
                if (c == '\n') ++line;
                field += c;
            }
            continue;
        }
        if (c == '"') {
            quoted = true;
            any = true;
        } else if (c == ',') {
            rec.push_back(std::move(field));
            field.clear();
            any = true;
        } else if (c == '\n' || c == '\r') {
            if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
            if (any || !field.empty()) {
                rec.push_back(std::move(field));
                out.push_back(std::move(rec));
            }
            rec.clear();
            field.clear();
            any = false;
            start_line = ++line;
        } else {
            field += c;
            any = true;
        }
    }
    if (quoted) throw Error(where + ": line " + std::to_string(start_line) + ": a quoted field is not closed");
    if (any || !field.empty()) {
        rec.push_back(std::move(field));
        out.push_back(std::move(rec));
    }
    return out;
}

int CsvTable::col(const std::string& name) const {
    for (std::size_t i = 0; i < header.size(); ++i)
        if (header[i] == name) return int(i);
    return -1;
}

CsvTable read_csv_table(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw Error(path + ": cannot open the file");
    std::ostringstream ss;
    ss << f.rdbuf();
    const std::string text = ss.str();
    if (text.find('\0') != std::string::npos) throw Error(path + ": not a CSV file (binary data)");
    auto recs = parse_csv_records(text, path);
    if (recs.empty()) throw Error(path + ": the file is empty (no header line)");
    CsvTable t;
    t.path = path;
    t.header = std::move(recs.front());
    for (std::size_t i = 1; i < recs.size(); ++i) {
        if (recs[i].size() != t.header.size())
            throw Error(path + ": record " + std::to_string(i + 1) + " has " + std::to_string(recs[i].size()) +
                        " fields, the header has " + std::to_string(t.header.size()));
        t.rows.push_back(std::move(recs[i]));
    }
    return t;
}

}  // namespace cs::cli
