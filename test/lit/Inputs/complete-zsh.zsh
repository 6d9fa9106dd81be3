# complete-zsh.zsh FPATH-DIR 'LINE': starts an interactive zsh on a pseudo-terminal (zpty) with
# FPATH-DIR (the _hir-* completion files) in $fpath, types LINE and one TAB, and prints the line
# as completion left it: "COMPLETED: LINE'". Nothing is printed when TAB only listed choices.
# The tools must be on PATH.
zmodload zsh/zpty || exit 1
zpty z zsh -f -i
zpty -w z "PS1='%% '; fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -D; unsetopt beep"
zpty -n -w z "$2"$'\t'
sleep 0.5
# Ctrl-A, "echo COMPLETED: ", Ctrl-E, Enter: the shell prints the line as it stands
zpty -n -w z $'\x01echo COMPLETED: \x05\n'
out=
for i in {1..100}; do
    zpty -r -t z chunk && out+=$chunk
    [[ $out == *$'\n'COMPLETED:* ]] && break
    sleep 0.1
done
zpty -d z
print -r -- "$out" | tr -d '\r' | grep -a '^COMPLETED:'
