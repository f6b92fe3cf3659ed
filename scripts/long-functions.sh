#!/usr/bin/env bash
# long-functions.sh: lists the C functions longer than a limit (default 120
# lines, the project's rule) under the given folders, one per line as
# `LINES FILE:LINE NAME`, longest first; exits 1 when any is listed.
#
# Usage: scripts/long-functions.sh [--max N] [--exclude FILE]... DIR|FILE...
#
# The scan matches braces: comments, string and character literals are
# blanked first, then a function is a top-level `{ ... }` whose text since
# the previous top-level `;` or `}` holds a parameter list `(...)` and no
# `=` (an initializer is not a function). Its length counts the lines from
# its name to its closing brace. Files are *.c, *.h and *.cu; --exclude
# takes a path as listed (e.g. model/schedule.c) and may repeat.
set -euo pipefail
max=120
excludes=()
paths=()
while [ $# -gt 0 ]; do
  case $1 in
    --max) max=$2; shift 2 ;;
    --max=*) max=${1#--max=}; shift ;;
    --exclude) excludes+=("$2"); shift 2 ;;
    --exclude=*) excludes+=("${1#--exclude=}"); shift ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "long-functions.sh: unknown option '$1' (valid: --max N, --exclude FILE)" >&2; exit 2 ;;
    *) paths+=("$1"); shift ;;
  esac
done
[ ${#paths[@]} -gt 0 ] || { echo "long-functions.sh: no folder given (usage: long-functions.sh [--max N] [--exclude FILE]... DIR...)" >&2; exit 2; }
case $max in ''|*[!0-9]*) echo "long-functions.sh: --max '$max': not a line count (valid: a positive integer)" >&2; exit 2 ;; esac

files=$(find "${paths[@]}" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) | LC_ALL=C sort)
list=$(for f in $files; do
  skip=0
  for x in "${excludes[@]+"${excludes[@]}"}"; do [ "${f#./}" = "${x#./}" ] && skip=1; done
  [ $skip = 1 ] && continue
  awk -v file="${f#./}" -v max="$max" '
  # blank comments and literals, keeping the line structure
  function clean(s,   out, i, c, n) {
    out = ""; n = length(s)
    for (i = 1; i <= n; i++) {
      c = substr(s, i, 1)
      if (incomment) { if (c == "*" && substr(s, i + 1, 1) == "/") { incomment = 0; i++ } continue }
      if (c == "/" && substr(s, i + 1, 1) == "*") { incomment = 1; i++; continue }
      if (c == "/" && substr(s, i + 1, 1) == "/") break
      if (c == "\"" || c == "\047") {
        q = c; i++
        while (i <= n && substr(s, i, 1) != q) { if (substr(s, i, 1) == "\\") i++; i++ }
        out = out q q; continue
      }
      out = out c
    }
    return out
  }
  BEGIN { depth = 0; incomment = 0; head = ""; headline = 0 }
  {
    line = $0
    if (!incomment && line ~ /^[ \t]*#/) next      # preprocessor lines
    s = clean(line)
    for (i = 1; i <= length(s); i++) {
      c = substr(s, i, 1)
      if (depth == 0) {
        if (c == "{") {
          isfn = (head ~ /\)[^()]*$/ && head !~ /=/)
          name = ""
          if (isfn) { h = head; sub(/\([^()]*(\([^()]*\)[^()]*)*\)[^()]*$/, "", h); if (match(h, /[A-Za-z_][A-Za-z_0-9]*[ \t]*$/)) name = substr(h, RSTART, RLENGTH); gsub(/[ \t]/, "", name) }
          start = (namelines[name] ? namelines[name] : headline)
          depth = 1; continue
        }
        if (c == ";" || c == "}") { head = ""; headline = 0; delete namelines; continue }
        if (c !~ /[ \t]/ && headline == 0) headline = NR
        head = head c
        if (match(head, /[A-Za-z_][A-Za-z_0-9]*[ \t]*$/)) namelines[substr(head, RSTART, RLENGTH)] = NR
      } else {
        if (c == "{") depth++
        else if (c == "}") {
          depth--
          if (depth == 0) {
            if (isfn && name != "" && NR - start + 1 > max) printf "%d %s:%d %s\n", NR - start + 1, file, start, name
            head = ""; headline = 0; delete namelines
          }
        }
      }
    }
    if (depth == 0) head = head " "
  }' "$f"
done | sort -k1,1nr -k2,2)
[ -z "$list" ] && exit 0
printf '%s\n' "$list"
exit 1
