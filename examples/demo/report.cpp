// report.cpp - what tf-demo shows besides its text report: the choices it
// made, progress on stderr, and the plots of each structure's measured
// error and memory over the stream (gnuplot, SVG) with an index.html.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "demo.hpp"

namespace demo {

namespace {
std::vector<std::string> g_choices;
}  // namespace

void print_choice(const std::string &what, const char *option, bool given, const std::string &why) {
    const std::string text =
        what + ": " + (given ? std::string("from ") + option : why + ", since " + option + " was not given");
    g_choices.push_back(text);
    print_row("chose", text);
}

const std::vector<std::string> &printed_choices() { return g_choices; }

// ---------------------------------------------------------------------------
// Progress

void Progress::at(const char *what, uint64_t done, uint64_t total) {
    if (!on_ || total == 0) return;
    const auto now = std::chrono::steady_clock::now();
    const int pct = int(100.0 * double(std::min(done, total)) / double(total));
    const bool same = last_what_ == what;
    // A terminal line is redrawn up to 4 times a second; elsewhere one line
    // per 10% and at most one a second.
    const auto gap = std::chrono::milliseconds(tty_ ? 250 : 1000);
    if (same && (now - last_ < gap || pct == last_percent_ || (!tty_ && pct / 10 == last_percent_ / 10))) return;
    last_ = now;
    last_percent_ = pct;
    last_what_ = what;
    if (tty_) {
        std::fprintf(stderr, "\r\033[Ktf-demo: %s %d%%", what, pct);
        dirty_ = true;
    } else {
        std::fprintf(stderr, "tf-demo: %s %d%%\n", what, pct);
    }
    std::fflush(stderr);
}

void Progress::clear() {
    if (dirty_) std::fprintf(stderr, "\r\033[K"), std::fflush(stderr);
    dirty_ = false;
    last_what_.clear();
}

// ---------------------------------------------------------------------------
// Plots and index.html

bool series_held(const Series &s) {
    for (const SeriesPoint &p : s.points)
        if (p.measured > p.bound) return false;
    return true;
}

namespace {

std::string html_escape(const std::string &t) {
    std::string o;
    for (char c : t) {
        switch (c) {
            case '&':
                o += "&amp;";
                break;
            case '<':
                o += "&lt;";
                break;
            case '>':
                o += "&gt;";
                break;
            case '"':
                o += "&quot;";
                break;
            default:
                o += c;
        }
    }
    return o;
}

// A gnuplot string in double quotes (enhanced text off for titles).
std::string gp_string(const std::string &t) {
    std::string o = "\"";
    for (char c : t) {
        if (c == '"' || c == '\\') o += '\\';
        o += c;
    }
    return o + "\"";
}

bool write_file(const std::string &path, const std::string &text) {
    std::FILE *f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) {
        std::fprintf(stderr, "tf-demo: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
        return false;
    }
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (std::fclose(f) != 0 || !ok) {
        std::fprintf(stderr, "tf-demo: error writing %s\n", path.c_str());
        return false;
    }
    return true;
}

// Runs `gnuplot script` in `dir`; false with a message when it fails.
bool run_gnuplot(const std::string &dir, const std::string &script) {
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
        std::fprintf(stderr, "tf-demo: fork: %s\n", std::strerror(errno));
        return false;
    }
    if (pid == 0) {
        if (chdir(dir.c_str()) != 0) _exit(126);
        execlp("gnuplot", "gnuplot", script.c_str(), static_cast<char *>(nullptr));
        std::fprintf(stderr, "tf-demo: cannot run gnuplot: %s (Debian: apt-get install gnuplot-nox)\n",
                     std::strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return false;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
    std::fprintf(stderr, "tf-demo: gnuplot %s/%s failed\n", dir.c_str(), script.c_str());
    return false;
}

std::string number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

}  // namespace

bool write_report(const std::string &dir, const Recorder &rec, const Stream &stream,
                  const std::vector<std::string> &choices) {
    if (mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) {
        std::fprintf(stderr, "tf-demo: cannot create %s: %s\n", dir.c_str(), std::strerror(errno));
        return false;
    }
    std::string html =
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
        "<title>tf-demo: libtemporalfilters on a stream</title>\n"
        "<style>body{font-family:sans-serif;max-width:80em;margin:1em auto}img{max-width:49%}</style>\n"
        "</head>\n<body>\n<h1>tf-demo: libtemporalfilters on a stream</h1>\n";
    html += "<p>" + html_escape(stream.description) + (stream.detail.empty() ? "" : "; " + html_escape(stream.detail)) +
            "; " + count(stream.events()) + " events, " + count(stream.keys.count()) + " distinct keys.</p>\n";
    html +=
        "<p>Each structure replayed the stream next to an exact reference. The left plot is the error measured "
        "so far beside what the structure promises; the right one its memory beside the exact reference's.</p>\n";
    html += "<h2>Parameters</h2>\n<ul>\n";
    for (const std::string &c : choices) html += "<li>" + html_escape(c) + "</li>\n";
    html += "</ul>\n";

    for (const auto &sp : rec.all()) {
        const Series &s = *sp;
        std::string dat = "# " + s.title + "\n# events\tmeasured\tbound\tmemory\texact_memory\n";
        double top = 0.0;
        for (const SeriesPoint &p : s.points) {
            dat += number(p.x) + "\t" + number(p.measured) + "\t" + number(p.bound) + "\t" + number(p.memory) + "\t" +
                   number(p.exact) + "\n";
            top = std::max({top, p.measured, p.bound});
        }
        if (s.points.empty()) dat += "0\t0\t0\t0\t0\n";  // a stream shorter than one checkpoint
        const std::string data = "'" + s.name + ".dat'";
        std::string gp = "set terminal svg size 640,360 noenhanced font 'sans,11'\n";
        gp += "set datafile separator '\\t'\n";
        gp += "set key below\nset grid\nset xlabel 'events replayed'\nset xrange [0:*]\n";
        // The error beside the promise's bound.
        gp += "set output '" + s.name + "-error.svg'\n";
        gp += "set title " + gp_string(s.title + ": error") + "\n";
        gp += "set ylabel " + gp_string(s.error_label) + "\n";
        gp += "set yrange [0:" + (top > 0.0 ? number(top * 1.15) : std::string("1")) + "]\n";
        gp += "plot " + data + " using 1:2 with linespoints lw 2 pt 7 ps 0.4 lc rgb '#1f77b4' title 'measured', \\\n";
        gp += "     " + data + " using 1:3 with lines lw 2 lc rgb '#d62728' title " + gp_string(s.bound_label) + "\n";
        // The memory beside the exact reference's.
        gp += "set output '" + s.name + "-memory.svg'\n";
        gp += "set title " + gp_string(s.title + ": memory") + "\n";
        gp += "set ylabel 'bytes'\nset yrange [0:*]\n";
        gp += "plot " + data + " using 1:4 with lines lw 2 lc rgb '#1f77b4' title 'structure', \\\n";
        gp += "     " + data + " using 1:5 with lines lw 2 lc rgb '#2ca02c' title 'exact reference'\n";
        if (!write_file(dir + "/" + s.name + ".dat", dat) || !write_file(dir + "/" + s.name + ".gp", gp) ||
            !run_gnuplot(dir, s.name + ".gp"))
            return false;
        const bool held = series_held(s);
        html += "<h2>" + html_escape(s.title) + "</h2>\n<p>Promise: " + html_escape(s.promise) + "</p>\n";
        html += std::string("<p>") +
                (s.hard ? (held ? "Held at every checkpoint." : "BROKEN at some checkpoint.")
                        : "A statistical target: the measured rate may wander above it by sampling noise; the text "
                          "report gives its verdict.") +
                "</p>\n";
        html += "<p><img src=\"" + s.name + "-error.svg\" alt=\"" + html_escape(s.title) + ": error\"/> <img src=\"" +
                s.name + "-memory.svg\" alt=\"" + html_escape(s.title) + ": memory\"/></p>\n";
    }
    html += "</body>\n</html>\n";
    return write_file(dir + "/index.html", html);
}

}  // namespace demo
