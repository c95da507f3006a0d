// The one RFC 4180 CSV reader (quoted fields, doubled quotes, CRLF) of the commands that read
// CSVs: `compare` and `merge` (result CSVs) and `profile` (Nsight Compute's --csv output).
// Result CSVs may be stored gzip-compressed (`.csv.gz`): the readers of files go through
// inflate_if_gzip, which recognises them by gzip's magic bytes, not by the name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cs::cli {

// The largest CSV the readers take (1 GiB, plain or inflated): a results CSV of every
// variant, layer and batch is a few MB.
inline constexpr std::uintmax_t kMaxCsvBytes = std::uintmax_t(1) << 30;

// `bytes` (the contents of the file `where`) as they are, or inflated when they start with
// gzip's magic bytes 1f 8b (concatenated gzip members are read one after the other, as gzip
// -d does). Throws cs::Error naming `where` for a truncated or corrupt gzip stream, data after
// it that is not another member, or inflated contents larger than `max_bytes`.
std::string inflate_if_gzip(std::string bytes, const std::string& where, std::uintmax_t max_bytes);

// One field as the CSV writers write it (RFC 4180): as it is, or, when it holds a comma, a
// quote or a line break, in double quotes with quotes doubled and line breaks as spaces (a
// record stays one line). The one quoting function of every CSV the tool writes.
std::string csv_quote(const std::string& s);
// A number as the CSVs and reports write it: printf format `fmt`, empty when it is not finite (a
// value not recorded).
std::string format_number(double v, const char* fmt = "%.6g");

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

// Reads a CSV file with a header line, plain or gzip-compressed. Throws cs::Error naming the
// file: missing, empty, no header, a bad gzip stream, or a row whose width differs from the
// header's (with its line number).
CsvTable read_csv_table(const std::string& path);

}  // namespace cs::cli
