#include "csv_table.hpp"

#include "error.hpp"

#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

namespace cs::cli {

namespace {

bool starts_gzip(const std::string& b, std::size_t at) {
    return b.size() >= at + 2 && static_cast<unsigned char>(b[at]) == 0x1f && static_cast<unsigned char>(b[at + 1]) == 0x8b;
}

}  // namespace

std::string inflate_if_gzip(std::string bytes, const std::string& where, std::uintmax_t max_bytes) {
    if (!starts_gzip(bytes, 0)) return bytes;
    if (bytes.size() > max_bytes || bytes.size() > std::numeric_limits<uInt>::max())
        throw Error(where + ": " + std::to_string(bytes.size()) + " bytes of gzip data, too large for a CSV");
    z_stream z{};
    // 16 + MAX_WBITS: a gzip header and trailer (CRC-32 and length, both checked by zlib).
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw Error(where + ": cannot start zlib's inflate");
    struct End {
        z_stream& z;
        ~End() { inflateEnd(&z); }
    } end{z};
    std::string out;
    char buf[1 << 16];
    std::size_t pos = 0;  // start of the member being inflated
    while (true) {
        z.next_in = reinterpret_cast<Bytef*>(bytes.data() + pos);
        z.avail_in = static_cast<uInt>(bytes.size() - pos);
        int rc = Z_OK;
        while (rc != Z_STREAM_END) {
            z.next_out = reinterpret_cast<Bytef*>(buf);
            z.avail_out = sizeof buf;
            rc = inflate(&z, Z_NO_FLUSH);
            if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_MEM_ERROR || rc == Z_STREAM_ERROR)
                throw Error(where + ": not a readable gzip file (" + (z.msg ? z.msg : "zlib error " + std::to_string(rc)) +
                            ")");
            out.append(buf, sizeof buf - z.avail_out);
            if (out.size() > max_bytes)
                throw Error(where + ": more than " + std::to_string(max_bytes) + " bytes once inflated, too large for a CSV");
            // No progress possible: every input byte is used and the stream's end marker and
            // trailer were not among them, so the file stops inside the compressed stream.
            if (rc == Z_BUF_ERROR)
                throw Error(where + ": truncated gzip file (the compressed data ends before the end of its stream; "
                                    "was it copied whole?)");
        }
        pos = bytes.size() - z.avail_in;
        if (pos == bytes.size()) break;
        if (!starts_gzip(bytes, pos))
            throw Error(where + ": " + std::to_string(bytes.size() - pos) +
                        " bytes after the end of the gzip stream that are not another gzip member");
        if (inflateReset(&z) != Z_OK) throw Error(where + ": cannot restart zlib's inflate");
    }
    return out;
}

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
    if (f.bad()) throw Error(path + ": read error");
    const std::string text = inflate_if_gzip(ss.str(), path, kMaxCsvBytes);
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

std::string csv_quote(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) {
        if (c == '"') q += '"';
        q += (c == '\n' || c == '\r') ? ' ' : c;
    }
    return q + "\"";
}

std::string format_number(double v, const char* fmt) {
    if (!std::isfinite(v)) return "";
    char b[64];
    std::snprintf(b, sizeof b, fmt, v);
    return b;
}

}  // namespace cs::cli
