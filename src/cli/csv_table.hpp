// The one RFC 4180 CSV reader (quoted fields, doubled quotes, CRLF) of the commands that read
// CSVs: `compare` and `merge` (result CSVs) and `profile` (Nsight Compute's --csv output).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cs::cli {

// A record's fields and the line it starts on.
struct CsvRecord {
    std::vector<std::string> fields;
    std::size_t line = 0;
};
// Every non-blank record of `text`; `where` names the source in errors. Throws cs::Error on
// binary data or an unterminated quoted field (naming the line).
std::vector<CsvRecord> parse_csv_lines(const std::string& text, const std::string& where);
// The same, fields only.
std::vector<std::vector<std::string>> parse_csv_records(const std::string& text, const std::string& where);

struct CsvTable {
    std::string path;
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;  // each as wide as the header
    // Index of a column, or -1.
    int col(const std::string& name) const;
};

// Reads a CSV file with a header line. Throws cs::Error naming the file: missing, empty,
// no header, or a row whose width differs from the header's (with its line number).
CsvTable read_csv_table(const std::string& path);

}  // namespace cs::cli
