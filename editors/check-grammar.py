#!/usr/bin/env python3
"""check-grammar.py -- every non-blank character of .hir files gets a named scope.

  check-grammar.py textmate GRAMMAR.json FILE...   tokenize with the grammar's patterns
  check-grammar.py vim SYNTAX.vim FILE...          ask a headless vim for the syntax groups

The TextMate half is a small tokenizer of its own (python3, no packages): the grammar's
top-level patterns (with #includes from the repository) are tried on each line as TextMate
does -- the match starting earliest wins, ties go to the pattern listed first -- and a match
covers its text when the rule has a `name`, or the text of its named `captures` otherwise. It
supports the subset of the TextMate format the hir grammar uses (`match` rules; no begin/end),
and refuses anything else, so a grammar that grows past it fails loudly instead of passing
untested. Python's `re` stands in for Oniguruma; the grammar keeps to their common subset.
(vscode-textmate + vscode-oniguruma would be the reference, but they are npm packages and
this check runs offline with python3 alone.)

Prints FILE:LINE:COL: not covered: 'TEXT' for each uncovered run and exits 1 if any.
"""
import json
import re
import subprocess
import sys
import tempfile


def load_rules(path):
    g = json.load(open(path))
    repo = g.get("repository", {})
    rules = []

    def add(p, depth=0):
        if "include" in p:
            ref = p["include"]
            if not ref.startswith("#") or ref[1:] not in repo or depth > 8:
                sys.exit("check-grammar: unsupported include %r" % ref)
            add(repo[ref[1:]], depth + 1)
        elif "patterns" in p and "match" not in p:
            for q in p["patterns"]:
                add(q, depth + 1)
        elif "match" in p:
            if "begin" in p or "end" in p:
                sys.exit("check-grammar: begin/end rules are not supported")
            caps = {int(k): v.get("name") for k, v in p.get("captures", {}).items()}
            if not p.get("name") and not any(caps.values()):
                sys.exit("check-grammar: rule %r has no name and no named captures" % p["match"])
            rules.append((re.compile(p["match"]), p.get("name"), caps))
        else:
            sys.exit("check-grammar: unsupported rule %r" % p)

    add({"patterns": g["patterns"]})
    return rules


def textmate_uncovered(rules, line):
    """Yields (col, text) runs of non-blank characters no named scope covers."""
    covered = [False] * len(line)
    pos = 0
    while pos < len(line):
        best = None
        for rx, name, caps in rules:
            m = rx.search(line, pos)
            if m and (best is None or m.start() < best[0].start()):
                best = (m, name, caps)
        if best is None:
            break
        m, name, caps = best
        if name:
            for i in range(m.start(), m.end()):
                covered[i] = True
        for k, cname in caps.items():
            if cname and m.group(k) is not None:
                for i in range(m.start(k), m.end(k)):
                    covered[i] = True
        pos = m.end() if m.end() > pos else pos + 1
    return runs(line, covered)


def runs(line, covered):
    i = 0
    while i < len(line):
        if not covered[i] and not line[i].isspace():
            j = i
            while j < len(line) and not covered[j] and not line[j].isspace():
                j += 1
            yield i + 1, line[i:j]
            i = j
        else:
            i += 1


VIM_SCRIPT = r"""
set nocompatible
syntax on
execute 'source ' . fnameescape(g:hir_syntax)
let out = []
for l in range(1, line('$'))
  let text = getline(l)
  let marks = ''
  for c in range(1, len(text))
    let marks .= synIDattr(synID(l, c, 1), 'name') == '' ? '0' : '1'
  endfor
  call add(out, marks)
endfor
call writefile(out, g:hir_out)
qall!
"""


def vim_uncovered(syntax, path):
    with tempfile.TemporaryDirectory() as d:
        script, out = d + "/check.vim", d + "/marks"
        open(script, "w").write(VIM_SCRIPT)
        subprocess.run(["vim", "-N", "-u", "NONE", "-i", "NONE", "-n", "-es",
                        "--cmd", "let g:hir_syntax = '%s' | let g:hir_out = '%s'" % (syntax, out),
                        "-S", script, path], check=False, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        marks = open(out).read().split("\n")
    lines = open(path, "rb").read().decode("utf-8", "replace").split("\n")
    for n, line in enumerate(lines):
        m = marks[n] if n < len(marks) else ""
        # vim counts columns in bytes; the corpus is ASCII, anything else is reported uncovered
        covered = [k < len(m) and m[k] == "1" for k in range(len(line))]
        for col, text in runs(line, covered):
            yield n + 1, col, text


def main(argv):
    if len(argv) < 4 or argv[1] not in ("textmate", "vim"):
        sys.exit(__doc__)
    bad = 0
    files = argv[3:]
    for path in files:
        if argv[1] == "textmate":
            rules = load_rules(argv[2])
            lines = open(path, "rb").read().decode("utf-8", "replace").split("\n")
            found = ((n + 1, col, text) for n, line in enumerate(lines)
                     for col, text in textmate_uncovered(rules, line))
        else:
            found = vim_uncovered(argv[2], path)
        for line, col, text in found:
            print("%s:%d:%d: not covered: %r" % (path, line, col, text))
            bad += 1
    print("check-grammar: %s: %d file(s), %d uncovered run(s)" % (argv[1], len(files), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
