#include "csv_table.hpp"

#include "error.hpp"

#include <fstream>
#include <sstream>

namespace cs::cli {

std::vector<CsvRecord> parse_csv_lines(const std::string& text, const std::string& where) {
    if (text.find('\0') != std::string::npos) throw Error(where + ": not a CSV file (binary data)");
    std::vector<CsvRecord> out;
    CsvRecord cur;
    std::string field;
    bool quoted = false, field_started = false, any = false;
    std::size_t line = 1;
    cur.line = 1;
    auto end_field = [&] {
        cur.fields.push_back(std::move(field));
        field.clear();
        field_started = false;
    };
    auto end_record = [&] {
        end_field();
        const bool blank = cur.fields.size() == 1 && cur.fields[0].empty();
        if (!blank) out.push_back(std::move(cur));
        cur = CsvRecord{};
        cur.line = line;
        any = false;
    };
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
        if (c == '"' && !field_started) {
            quoted = field_started = any = true;
        } else if (c == ',') {
            end_field();
            any = true;
        } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
            continue;
        } else if (c == '\n') {
            ++line;
            end_record();
        } else {
            field += c;
            field_started = any = true;
        }
    }
    if (quoted) throw Error(where + ":" + std::to_string(cur.line) + ": not a CSV file (a quote is never closed)");
    if (any || !field.empty()) end_record();
    return out;
}

std::vector<std::vector<std::string>> parse_csv_records(const std::string& text, const std::string& where) {
    std::vector<std::vector<std::string>> out;
    for (auto& r : parse_csv_lines(text, where)) out.push_back(std::move(r.fields));
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
