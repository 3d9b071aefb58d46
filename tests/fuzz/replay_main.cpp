// Replay driver for the fuzz targets when they are not built with libFuzzer.
//
//   fuzz_replay_<target> [FILE|DIR]... [--random N] [--seed S] [--max-len L]
//
// Runs LLVMFuzzerTestOneInput once on every FILE and on every regular file
// under every DIR (recursively, in sorted order). With --random N it then
// runs N pseudo-random inputs: random byte strings and stacked mutations of
// the files given (bit flips, interesting integers, inserted, erased and
// duplicated ranges, truncation, splicing). The generator is seeded with S
// (default 1), so a run is reproducible for the same files.
//
// If a random input makes the target crash, it is written to
// ./fuzz-replay-crash-<N>.bin first, so that it can be replayed as a file.
// Prints how many inputs ran; exits 1 when none did (e.g. an empty corpus
// directory), 2 on a usage error.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

// Optional hook of the sanitizer runtimes (ASan reports do not go through
// abort()); null when the program is built without a sanitizer.
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

// The random input being run, for the crash handlers.
const uint8_t *g_current = nullptr;
size_t g_current_size = 0;
char g_crash_path[64] = "";

void save_current_input() {
    if (g_current == nullptr && g_current_size != 0) return;
    if (g_crash_path[0] == '\0') return;
    const int fd = open(g_crash_path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) return;
    size_t done = 0;
    while (done < g_current_size) {
        const ssize_t n = write(fd, g_current + done, g_current_size - done);
        if (n <= 0) break;
        done += size_t(n);
    }
    close(fd);
    const char msg[] = "fuzz replay: the crashing random input was saved to ";
    (void)!write(2, msg, sizeof msg - 1);
    (void)!write(2, g_crash_path, std::strlen(g_crash_path));
    (void)!write(2, "\n", 1);
    g_crash_path[0] = '\0';  // once
}

void on_signal(int sig) {
    save_current_input();
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

void on_sanitizer_death() { save_current_input(); }

bool read_file(const fs::path &p, Bytes *out) {
    std::ifstream f(p, std::ios::binary);
    if (!f) return false;
    out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    return !f.bad();
}

// A small deterministic mutator. Only rng() is used (no std distributions,
// whose output differs between standard libraries).
class Mutator {
   public:
    explicit Mutator(uint64_t seed) : rng_(seed) {}

    uint64_t below(uint64_t n) { return n == 0 ? 0 : rng_() % n; }

    Bytes random_bytes(size_t max_len) {
        // Mostly short inputs, sometimes up to max_len.
        const size_t len =
            below(4) == 0 ? size_t(below(max_len + 1)) : size_t(below(std::min<size_t>(64, max_len) + 1));
        Bytes b(len);
        for (auto &x : b) x = uint8_t(rng_());
        return b;
    }

    void mutate(Bytes &b, const std::vector<Bytes> &corpus, size_t max_len) {
        static const uint64_t interesting[] = {0,
                                               1,
                                               2,
                                               3,
                                               7,
                                               8,
                                               9,
                                               16,
                                               31,
                                               32,
                                               33,
                                               63,
                                               64,
                                               255,
                                               256,
                                               4096,
                                               65535,
                                               65536,
                                               0x7fffffff,
                                               0x80000000,
                                               0xffffffff,
                                               uint64_t(1) << 32,
                                               uint64_t(1) << 60,
                                               uint64_t(1) << 61,
                                               uint64_t(1) << 63,
                                               ~uint64_t(0),
                                               ~uint64_t(0) - 1};
        const size_t n_interesting = sizeof interesting / sizeof interesting[0];
        switch (below(12)) {
            case 0:  // flip one bit
                if (!b.empty()) b[below(b.size())] ^= uint8_t(1u << below(8));
                break;
            case 1:  // random byte
                if (!b.empty()) b[below(b.size())] = uint8_t(rng_());
                break;
            case 2: {  // interesting byte
                static const uint8_t v[] = {0, 1, 2, 0x7f, 0x80, 0xfe, 0xff, 0x20, 0x40};
                if (!b.empty()) b[below(b.size())] = v[below(sizeof v)];
                break;
            }
            case 3:    // interesting 64-bit little-endian value
            case 4: {  // interesting 32-bit little-endian value
                const size_t width = below(12) < 6 ? 8 : 4;
                if (b.size() < width) break;
                size_t off = below(b.size() - width + 1);
                if (below(2)) off &= ~size_t(3);  // fields tend to be aligned
                uint64_t v = interesting[below(n_interesting)];
                if (below(4) == 0) v += below(3) - 1;
                for (size_t i = 0; i < width; ++i) b[off + i] = uint8_t(v >> (8 * i));
                break;
            }
            case 5: {  // insert random bytes
                const size_t at = below(b.size() + 1), n = 1 + below(16);
                Bytes ins(n);
                for (auto &x : ins) x = uint8_t(rng_());
                b.insert(b.begin() + long(at), ins.begin(), ins.end());
                break;
            }
            case 6: {  // erase a range
                if (b.empty()) break;
                const size_t at = below(b.size()), n = 1 + below(std::min<size_t>(32, b.size() - at));
                b.erase(b.begin() + long(at), b.begin() + long(at + n));
                break;
            }
            case 7:  // truncate
                b.resize(below(b.size() + 1));
                break;
            case 8: {  // copy a chunk elsewhere (overwrite)
                if (b.size() < 2) break;
                const size_t from = below(b.size()), to = below(b.size());
                const size_t n = 1 + below(std::min(b.size() - from, b.size() - to));
                std::memmove(b.data() + to, b.data() + from, n);
                break;
            }
            case 9: {  // splice with another input
                if (corpus.empty()) break;
                const Bytes &o = corpus[below(corpus.size())];
                const size_t keep = below(b.size() + 1), from = below(o.size() + 1);
                b.resize(keep);
                b.insert(b.end(), o.begin() + long(from), o.end());
                break;
            }
            case 10: {  // append random bytes
                const size_t n = 1 + below(32);
                for (size_t i = 0; i < n; ++i) b.push_back(uint8_t(rng_()));
                break;
            }
            default: {  // duplicate a chunk (grows)
                if (b.empty()) break;
                const size_t from = below(b.size()), n = 1 + below(std::min<size_t>(64, b.size() - from));
                const Bytes chunk(b.begin() + long(from), b.begin() + long(from + n));
                b.insert(b.begin() + long(below(b.size() + 1)), chunk.begin(), chunk.end());
                break;
            }
        }
        if (b.size() > max_len) b.resize(max_len);
    }

    Bytes next(const std::vector<Bytes> &corpus, size_t max_len) {
        if (corpus.empty() || below(8) == 0) return random_bytes(max_len);
        Bytes b = corpus[below(corpus.size())];
        const uint64_t rounds = 1 + below(below(2) ? 2 : 8);
        for (uint64_t i = 0; i < rounds; ++i) mutate(b, corpus, max_len);
        return b;
    }

   private:
    std::mt19937_64 rng_;
};

void usage(const char *argv0) {
    std::fprintf(stderr, "usage: %s [FILE|DIR]... [--random N] [--seed S] [--max-len L]\n", argv0);
}

bool parse_u64(const char *s, uint64_t *v) {
    char *end = nullptr;
    errno = 0;
    const unsigned long long x = std::strtoull(s, &end, 0);
    if (errno != 0 || end == s || *end != '\0') return false;
    *v = x;
    return true;
}

}  // namespace

int main(int argc, char **argv) {
    uint64_t random_runs = 0, seed = 1, max_len = 4096;
    std::vector<fs::path> files;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        uint64_t *target = nullptr;
        if (a == "--random")
            target = &random_runs;
        else if (a == "--seed")
            target = &seed;
        else if (a == "--max-len")
            target = &max_len;
        else if (a == "-h" || a == "--help") {
            usage(argv[0]);
            return 0;
        } else if (a.size() > 2 && a[0] == '-' && a[1] == '-') {
            usage(argv[0]);
            return 2;
        } else if (a.size() > 1 && a[0] == '-') {
            // libFuzzer-style flags (-runs=..., -max_len=...) are accepted and ignored.
            continue;
        }
        if (target) {
            if (i + 1 >= argc || !parse_u64(argv[i + 1], target)) {
                usage(argv[0]);
                return 2;
            }
            ++i;
            continue;
        }
        std::error_code ec;
        if (fs::is_directory(a, ec)) {
            std::vector<fs::path> found;
            for (const auto &e : fs::recursive_directory_iterator(a, ec))
                if (e.is_regular_file()) found.push_back(e.path());
            if (ec) {
                std::fprintf(stderr, "cannot list %s: %s\n", a.c_str(), ec.message().c_str());
                return 2;
            }
            std::sort(found.begin(), found.end());
            files.insert(files.end(), found.begin(), found.end());
        } else if (fs::is_regular_file(a, ec)) {
            files.emplace_back(a);
        } else {
            std::fprintf(stderr, "no such file or directory: %s\n", a.c_str());
            return 2;
        }
    }

    std::signal(SIGABRT, on_signal);
    std::signal(SIGSEGV, on_signal);
    std::signal(SIGBUS, on_signal);
    std::signal(SIGFPE, on_signal);
    std::signal(SIGILL, on_signal);
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(on_sanitizer_death);

    const auto start = std::chrono::steady_clock::now();
    std::vector<Bytes> corpus;
    uint64_t ran_files = 0;
    for (const fs::path &p : files) {
        Bytes b;
        if (!read_file(p, &b)) {
            std::fprintf(stderr, "cannot read %s\n", p.c_str());
            return 2;
        }
        std::fprintf(stderr, "running %s (%zu bytes)\n", p.c_str(), b.size());
        LLVMFuzzerTestOneInput(b.data(), b.size());
        ++ran_files;
        corpus.push_back(std::move(b));
    }

    Mutator m(seed);
    for (uint64_t i = 0; i < random_runs; ++i) {
        const Bytes b = m.next(corpus, size_t(max_len));
        std::snprintf(g_crash_path, sizeof g_crash_path, "fuzz-replay-crash-%llu.bin", (unsigned long long)i);
        g_current = b.data();
        g_current_size = b.size();
        LLVMFuzzerTestOneInput(b.data(), b.size());
    }
    g_crash_path[0] = '\0';
    g_current = nullptr;
    g_current_size = 0;

    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const uint64_t total = ran_files + random_runs;
    std::printf("ran %llu inputs (%llu files, %llu random with seed %llu) in %.2f s\n", (unsigned long long)total,
                (unsigned long long)ran_files, (unsigned long long)random_runs, (unsigned long long)seed, secs);
    if (total == 0) {
        std::fprintf(stderr, "no inputs were run\n");
        return 1;
    }
    return 0;
}
