// The core's half of the error state: the thread-local message itself
// (tf_last_error_message, tf_set_last_error_message), the status names, the
// version and the clock. The messages are formatted by common/error.cpp,
// which the companion libraries link too.
#include "common/status.hpp"

#include <cstdio>
#include <ctime>

namespace tf {
namespace {
// A fixed buffer: recording an error never allocates and never throws.
thread_local char last_error[kLastErrorCapacity];
}  // namespace
}  // namespace tf

extern "C" {

TF_API const char *tf_status_string(int status) {
    switch (status) {
        case TF_OK:
            return "TF_OK";
        case TF_ERR_NULL:
            return "TF_ERR_NULL";
        case TF_ERR_INVALID_ARGUMENT:
            return "TF_ERR_INVALID_ARGUMENT";
        case TF_ERR_OUT_OF_MEMORY:
            return "TF_ERR_OUT_OF_MEMORY";
        case TF_ERR_TOO_LARGE:
            return "TF_ERR_TOO_LARGE";
        case TF_ERR_BUFFER_TOO_SMALL:
            return "TF_ERR_BUFFER_TOO_SMALL";
        case TF_ERR_TRUNCATED:
            return "TF_ERR_TRUNCATED";
        case TF_ERR_BAD_MAGIC:
            return "TF_ERR_BAD_MAGIC";
        case TF_ERR_UNSUPPORTED_VERSION:
            return "TF_ERR_UNSUPPORTED_VERSION";
        case TF_ERR_WRONG_KIND:
            return "TF_ERR_WRONG_KIND";
        case TF_ERR_CHECKSUM:
            return "TF_ERR_CHECKSUM";
        case TF_ERR_CORRUPT:
            return "TF_ERR_CORRUPT";
        case TF_ERR_INCOMPATIBLE:
            return "TF_ERR_INCOMPATIBLE";
        case TF_ERR_INTERNAL:
            return "TF_ERR_INTERNAL";
        case TF_ERR_TIMEOUT:
            return "TF_ERR_TIMEOUT";
        case TF_ERR_UNAVAILABLE:
            return "TF_ERR_UNAVAILABLE";
        default:
            return "TF_ERR_UNKNOWN";
    }
}

TF_API const char *tf_last_error_message(void) { return tf::last_error; }

TF_API void tf_set_last_error_message(const char *message) {
    if (message == nullptr) {
        tf::last_error[0] = '\0';
        return;
    }
    std::snprintf(tf::last_error, sizeof tf::last_error, "%s", message);
}

TF_API void tf_clear_last_error(void) { tf::last_error[0] = '\0'; }

TF_API const char *tf_version_string(void) { return TF_VERSION_STRING; }

TF_API uint32_t tf_version_number(void) { return TF_VERSION_NUMBER; }

TF_API uint64_t tf_clock_now_ms(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return 1;
    uint64_t ms = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
    return ms == 0 ? 1 : ms;
}

}  // extern "C"
