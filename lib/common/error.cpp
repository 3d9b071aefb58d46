// fail() and fail_as() (status.hpp): format a message and hand it to the
// core's thread-local store through tf_set_last_error_message(). Compiled
// into the internal static library temporalfilters_common, which both the
// core and the companion libraries link, so that every library of the
// project reports through the one tf_last_error_message().
#include <cstdarg>
#include <cstdio>

#include "common/status.hpp"

namespace tf {

tf_status fail(tf_status status, const char *fmt, ...) noexcept {
    char msg[kLastErrorCapacity];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tf_set_last_error_message(msg);
    return status;
}

tf_status fail_as(tf_status status, const char *prefix) noexcept {
    char why[kLastErrorCapacity];
    std::snprintf(why, sizeof why, "%s", tf_last_error_message());
    return fail(status, "%s: %s", prefix, why);
}

}  // namespace tf
