#!/usr/bin/env bash
# Refuses, in every shell script (those that do not set pipefail are sourced
# by those that do, or may come to set it), a pipeline ending in a
# reader that may stop early (grep -q, grep -m, head): the writer then dies
# of SIGPIPE when it has more to say, the pipeline fails, and the check
# reports the opposite of what it found, depending on timing. CI failed on
# exactly that (`ldd prog | grep -q lib` in tests/install/go/run.sh). Read
# the tool's whole output first: out=$(tool); grep -q re <<<"$out".
#
#   scripts/check_scripts.sh      exits 1 and lists the offending lines
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

status=0
while IFS= read -r f; do
    # A comment is not code; a line may say why it is safe with "pipefail-ok".
    hits=$(grep -nE '\|[[:space:]]*(grep[[:space:]]+(-[a-zA-Z]*[qm]|--quiet|--max-count)|head\b)' "$f" | # pipefail-ok: the pattern itself
        grep -vE '^[0-9]+:[[:space:]]*#|pipefail-ok' || true)
    if [ -n "$hits" ]; then
        printf '%s\n' "$hits" | sed "s|^|$f:|"
        status=1
    fi
done < <(git ls-files '*.sh' .ci/run)
if [ "$status" != 0 ]; then
    echo "check_scripts.sh: an early-exit reader after a pipe under pipefail (see the comment at the top)"
fi
exit "$status"
