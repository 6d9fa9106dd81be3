#!/bin/bash
# complete-bash.sh SCRIPT WORD...: loads a bash completion script (hir-TOOL --completion=bash),
# completes the last WORD of the command line WORD... as bash does on TAB, and prints the
# candidates one a line, sorted. "=" stands alone as a word, as bash splits "--opt=v" with the
# default COMP_WORDBREAKS; an empty last word completes a new word.
source "$1" || exit 1
shift
COMP_WORDS=("$@")
COMP_CWORD=$(( $# - 1 ))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
fn=$(complete -p "$1" | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
[ -n "$fn" ] || { echo "no completion for $1" >&2; exit 1; }
"$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}" | sort
