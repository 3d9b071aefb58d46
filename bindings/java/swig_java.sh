#!/bin/sh
# swig_java.sh CONSTANTS.java SWIG SWIG-ARGUMENTS...
#
# Runs SWIG for the Java binding, then makes the constants interface it writes
# (CONSTANTS.java: TF_NEVER, TF_RETRY_NEVER, the flags and limits of the C
# headers) package-private, like every other generated class: SWIG always
# writes that interface public, and no typemap or pragma changes it.
set -eu
constants=$1
shift
"$@"
sed -i 's/^public interface /interface /' "$constants"
grep -q '^interface ' "$constants"
