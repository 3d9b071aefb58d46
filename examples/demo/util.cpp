// util.cpp - error reporting and report formatting for tf-demo.
#include <cstdio>
#include <cstring>

#include "demo.hpp"

namespace demo {

namespace {
constexpr int kWidth = 78;   // report width; verdicts end in the last column
constexpr int kLabel = 20;   // label column
constexpr int kColumn = 15;  // width of the sketch / exact columns
}  // namespace

bool check(tf_status status, const char *what) {
    if (status == TF_OK) return true;
    std::fprintf(stderr, "tf-demo: %s failed: %s: %s\n", what, tf_status_string(status), tf_last_error_message());
    return false;
}

std::string count(uint64_t n) {
    std::string digits = std::to_string(n), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::string bytes(size_t n) {
    char buf[32];
    if (n < 1024)
        std::snprintf(buf, sizeof buf, "%zu B", n);
    else if (n < 1024 * 1024)
        std::snprintf(buf, sizeof buf, "%.1f KiB", double(n) / 1024.0);
    else
        std::snprintf(buf, sizeof buf, "%.2f MiB", double(n) / (1024.0 * 1024.0));
    return buf;
}

std::string percent(double fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f%%", 100.0 * fraction);
    return buf;
}

std::string nanos(double ns) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f ns", ns);
    return buf;
}

std::string span(const Stream &s, uint64_t t) {
    if (s.unit != "ms") return count(t) + " " + (t == 1 && s.unit == "units" ? std::string("unit") : s.unit);
    char buf[48];
    const uint64_t sec = t / 1000;
    if (sec >= 3600)
        std::snprintf(buf, sizeof buf, "%lluh %02llum %02llus", (unsigned long long)(sec / 3600),
                      (unsigned long long)(sec / 60 % 60), (unsigned long long)(sec % 60));
    else if (sec >= 60)
        std::snprintf(buf, sizeof buf, "%llum %02llus", (unsigned long long)(sec / 60), (unsigned long long)(sec % 60));
    else if (t % 1000 == 0)
        std::snprintf(buf, sizeof buf, "%llu s", (unsigned long long)sec);
    else
        std::snprintf(buf, sizeof buf, "%llu ms", (unsigned long long)t);
    return buf;
}

void print_title(const std::string &title) {
    std::string line = "== " + title + " ";
    while (int(line.size()) < kWidth) line += '=';
    std::printf("\n%s\n", line.c_str());
}

void print_subtitle(const std::string &title, const std::string &note) {
    std::printf("%s%s%s\n", title.c_str(), note.empty() ? "" : "  ", note.c_str());
}

void print_row(const std::string &label, const std::string &text) {
    std::printf("  %-*s %s\n", kLabel, label.c_str(), text.c_str());
}

void print_columns(const std::string &label, const std::string &a, const std::string &b, const std::string &c) {
    char line[256];
    std::snprintf(line, sizeof line, "  %-*s %-*s %-*s %s", kLabel, label.c_str(), kColumn, a.c_str(), kColumn,
                  b.c_str(), c.c_str());
    size_t n = std::strlen(line);
    while (n > 0 && line[n - 1] == ' ') line[--n] = '\0';
    std::printf("%s\n", line);
}

void print_verdict(const std::string &label, const std::string &text, const char *verdict) {
    std::string line = "  " + label;
    line.resize(size_t(kLabel) + 3, ' ');
    line += text;
    const size_t at = size_t(kWidth) - std::strlen(verdict);
    if (line.size() + 2 <= at)
        line.resize(at, ' ');
    else
        line += "  ";
    std::printf("%s%s\n", line.c_str(), verdict);
}

}  // namespace demo
