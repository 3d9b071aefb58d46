// sections.cpp - the list of structures tf-demo measures, in report order.
//
// To add a structure: write section_<name>.cpp with a class deriving from
// demo::Section and a factory function, declare the factory here, add it to
// the list below, and add the file to meson.build.
#include "demo.hpp"

namespace demo {

std::unique_ptr<Section> make_recency_sketch_section();
std::unique_ptr<Section> make_age_bloom_section();
std::unique_ptr<Section> make_time_bloom_section();
std::unique_ptr<Section> make_rate_limiter_section();
std::unique_ptr<Section> make_rotating_cuckoo_section();
std::unique_ptr<Section> make_recency_window_section();

const std::vector<SectionFactory> &all_sections() {
    // clang-format off
    static const std::vector<SectionFactory> list = {
        make_recency_sketch_section,
        make_age_bloom_section,
        make_time_bloom_section,
        make_rate_limiter_section,
        make_rotating_cuckoo_section,
        make_recency_window_section,
    };
    // clang-format on
    return list;
}

}  // namespace demo
