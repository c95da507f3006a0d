// A small RFC 4180 CSV reader (quoted fields, doubled quotes, CRLF) for the commands that
// read CSVs whole: `merge` (result CSVs) and `profile` (Nsight Compute's --csv output).
#pragma once

#include <string>
#include <vector>

namespace cs::cli {

// Every record of `text`; `where` names the source in errors. Throws cs::Error on an
// unterminated quoted field.
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
