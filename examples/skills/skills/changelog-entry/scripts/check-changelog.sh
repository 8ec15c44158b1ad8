#!/bin/sh
# Checks a CHANGELOG.md against the changelog-entry skill: a title, an [Unreleased] heading, and under it only
# Added / Changed / Fixed sections whose entries are "- " lines. Prints "ok" or each problem; exits 1 on a problem.
file=$1
# A name starting with "-" is still a file name.
case $file in -*) file=./$file ;; esac
if [ ! -f "$file" ]; then
  echo "$file: no such file"
  exit 1
fi
awk '
  NR == 1 && $0 != "# Changelog" { print FILENAME ":1: the first line is not \"# Changelog\""; bad = 1 }
  /^## \[Unreleased\]$/ { unreleased = 1; next }
  /^## / { if (unreleased) done = 1; next }
  unreleased && !done && /^### / {
    if ($0 != "### Added" && $0 != "### Changed" && $0 != "### Fixed") { print FILENAME ":" NR ": unknown section \"" $0 "\" (Added, Changed or Fixed)"; bad = 1 }
    section = 1; next
  }
  unreleased && !done && NF > 0 && section && $0 !~ /^- / { print FILENAME ":" NR ": an entry is one line starting with \"- \""; bad = 1 }
  unreleased && !done && /^- / { entries += 1 }
  END {
    if (!unreleased) { print FILENAME ": no \"## [Unreleased]\" heading"; bad = 1 }
    else if (entries == 0) { print FILENAME ": no entry under [Unreleased]"; bad = 1 }
    if (bad) exit 1
    print "ok"
  }
' "$file"
