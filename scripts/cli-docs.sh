#!/usr/bin/env bash
# The CLI pages (docs/cli/TOOL.md) embed each tool's --help verbatim. A block is a marker line
# and the fenced block right after it:
#
#   <!-- help: ddp-sim replay --help -->            the whole output of `ddp-sim replay --help`
#   <!-- help: ddp-train --help-all | Test hooks --> only that group of it ("Test hooks...:" to
#                                                    the next blank line)
#
#   scripts/cli-docs.sh --check [BIN_DIR]   exit 1 at the first block that differs from what the
#                                           tool prints, naming the page, the line and both texts
#   scripts/cli-docs.sh --write [BIN_DIR]   rewrite every block from the tools
#
# BIN_DIR holds the tools (default: build/release/bin). --check also fails when a tool with
# subcommands has one that its page does not show. A page whose tool is not built is skipped;
# when no page could be checked, the exit status is 77 (ctest: skipped).
set -euo pipefail

usage() { echo "usage: scripts/cli-docs.sh --check|--write [BIN_DIR]" >&2; exit 2; }
[[ $# -ge 1 && $# -le 2 ]] || usage
mode=$1
[[ $mode == --check || $mode == --write ]] || usage
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin_dir=${2:-$root/build/release/bin}
pages_dir=$root/docs/cli
[[ -d $bin_dir ]] || { echo "cli-docs: $bin_dir: expected the directory of the built tools" >&2; exit 2; }
bin_dir=$(cd "$bin_dir" && pwd)
[[ -d $pages_dir ]] || { echo "cli-docs: $pages_dir: expected the CLI pages" >&2; exit 2; }

# The text of one marker's command: `TOOL ARGS...`, optionally `| GROUP` (that group only).
help_text() {
  local spec=$1 command group=""
  command=${spec%%|*}
  [[ $spec == *"|"* ]] && group=${spec#*|}
  command=$(echo "$command" | sed -e 's/^ *//' -e 's/ *$//')
  group=$(echo "$group" | sed -e 's/^ *//' -e 's/ *$//')
  local tool=${command%% *} args=""
  [[ $command == *" "* ]] && args=${command#* }
  # shellcheck disable=SC2086  # the marker's arguments are words
  local text
  text=$(cd / && "$bin_dir/$tool" $args 2>&1) || {  # from /: no output depends on the caller's directory
    echo "cli-docs: '$command' failed: $text" >&2
    return 1
  }
  if [[ -n $group ]]; then
    text=$(printf '%s\n' "$text" | awk -v group="$group" '
      index($0, group) == 1 && $0 ~ /:$/ { inside = 1 }
      inside && $0 == "" { exit }
      inside { print }')
    [[ -n $text ]] || { echo "cli-docs: '$command' prints no group '$group'" >&2; return 1; }
  fi
  printf '%s\n' "$text"
}

checked=0
status=0
for page in "$pages_dir"/*.md; do
  relative=${page#"$root"/}
  tool=$(basename "$page" .md)
  if [[ ! -x $bin_dir/$tool ]]; then
    echo "cli-docs: $relative: skipped, $bin_dir/$tool is not built"
    continue
  fi
  out=$(mktemp)
  line_number=0
  block_spec=""
  state=text  # text | marker (a marker just read) | block (inside its fence)
  block_start=0
  expected_file=$(mktemp)
  actual_file=$(mktemp)
  page_failed=0
  specs=()
  while IFS= read -r line || [[ -n $line ]]; do
    line_number=$((line_number + 1))
    case $state in
      text)
        printf '%s\n' "$line" >>"$out"
        if [[ $line =~ ^\<\!--\ help:\ (.*)\ --\>$ ]]; then
          block_spec=${BASH_REMATCH[1]}
          specs+=("$block_spec")
          state=marker
        fi
        ;;
      marker)
        if [[ $line != '```text' ]]; then
          echo "cli-docs: $relative:$line_number: expected a \`\`\`text block after the marker '$block_spec'" >&2
          exit 1
        fi
        printf '%s\n' "$line" >>"$out"
        : >"$actual_file"
        block_start=$line_number
        state=block
        ;;
      block)
        if [[ $line == '```' ]]; then
          help_text "$block_spec" >"$expected_file" || exit 1
          cat "$expected_file" >>"$out"
          printf '%s\n' "$line" >>"$out"
          if [[ $mode == --check && $page_failed == 0 ]] && ! cmp -s "$expected_file" "$actual_file"; then
            # The first differing line: its number in the page, and both texts.
            mapfile -t difference < <(
              awk 'NR == FNR { want[FNR] = $0; n = FNR; next }
                   { have[FNR] = $0; m = FNR }
                   END {
                     for (i = 1; i <= (n > m ? n : m); ++i) {
                       if (!(i in want) || !(i in have) || want[i] != have[i]) {
                         print i
                         print (i in have ? have[i] : "(the end of the block)")
                         print (i in want ? want[i] : "(the end of its output)")
                         exit
                       }
                     }
                   }' "$expected_file" "$actual_file")
            offset=${difference[0]}
            page_text=${difference[1]}
            help_line=${difference[2]}
            echo "cli-docs: $relative:$((block_start + offset)): the block of '$block_spec' differs from the tool:" \
                 "the page has '$page_text', the tool prints '$help_line' (scripts/cli-docs.sh --write updates the pages)" >&2
            page_failed=1
            status=1
          fi
          state=text
        else
          printf '%s\n' "$line" >>"$actual_file"
        fi
        ;;
    esac
  done <"$page"
  if [[ $state != text ]]; then
    echo "cli-docs: $relative: expected the block of '$block_spec' to end with \`\`\`" >&2
    exit 1
  fi
  # Every subcommand of the tool has its block.
  subcommands=$(cd / && "$bin_dir/$tool" --help 2>/dev/null |
                  awk '/^Subcommands:$/ { inside = 1; next } inside && NF == 0 { exit } inside { print $1 }')
  for sub in $subcommands; do
    found=0
    for spec in ${specs[@]+"${specs[@]}"}; do
      [[ $spec == "$tool $sub --help"* ]] && found=1
    done
    if [[ $found == 0 ]]; then
      echo "cli-docs: $relative: expected a block '<!-- help: $tool $sub --help -->' for the subcommand $sub" >&2
      status=1
    fi
  done
  if [[ $mode == --write ]]; then
    if ! cmp -s "$out" "$page"; then
      cp "$out" "$page"
      echo "cli-docs: wrote $relative"
    fi
  fi
  rm -f "$out" "$expected_file" "$actual_file"
  checked=$((checked + 1))
done

if [[ $checked == 0 ]]; then
  echo "cli-docs: no page checked: none of their tools is built in $bin_dir"
  exit 77
fi
if [[ $mode == --check && $status == 0 ]]; then
  echo "cli-docs: $checked pages agree with --help"
fi
exit "$status"
