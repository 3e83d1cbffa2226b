#!/usr/bin/env bash
# Fails on a comment line in src/ (doc or plain) that reads like a lab notebook instead of
# a contract: a date, a commit id, a VM, callgrind, a run percentile (p50, p99, ...), or
# "measured". Figures of runs belong on the benchmarks page (BENCHMARKS.md), history in git.
#
# Usage: scripts/check-docs.sh [DIR...]   (default: src)
set -euo pipefail
cd "$(dirname "$0")/.."
dirs=("$@")
[ ${#dirs[@]} -eq 0 ] && dirs=(src)

# Only comment text is checked: the part of a line from `//` on.
pattern='(\b(19|20)[0-9]{2}-[01][0-9](-[0-3][0-9])?\b)'          # a date
pattern+='|((^|[^0-9A-Za-z_x])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b)' # a commit id
pattern+='|(\bVMs?\b)|(callgrind)|(\bp[0-9]{2}(\.[0-9]+)?\b)|(percentile)|(\bmeasured\b)'

found=$(grep -rnP --include='*.rs' '//' "${dirs[@]}" |
    perl -ne 'my ($loc, $text) = /^([^:]+:\d+:)(.*)$/ or next;
              my $i = index($text, "//"); next if $i < 0;
              my $c = substr($text, $i);
              print "$loc$c\n" if $c =~ /'"$pattern"'/i' || true)
if [ -n "$found" ]; then
    echo "check-docs: comment lines in ${dirs[*]} that name a date, a commit id, a VM, callgrind,"
    echo "a percentile or a measurement (put figures on BENCHMARKS.md, history in git):"
    echo "$found"
    exit 1
fi
echo "check-docs: no dated, measured or commit-id comment lines in ${dirs[*]}"
