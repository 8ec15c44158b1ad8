#!/usr/bin/env bash
# Fills DIR with links to what a fresh machine has: Node, npm, git, python3 and the programs of Debian's essential and required packages (mount among them) — so a PATH of DIR alone finds no jq, sshd, bwrap or chromium.
set -euo pipefail
dir=${1:?usage: bare-path.sh DIR}
mkdir -p "$dir"
link() { [ -e "$dir/$(basename "$1")" ] || ln -s "$1" "$dir/$(basename "$1")"; }
for program in node npm npx git; do link "$(command -v "$program")"; done
# python3 may be a version manager's shim: link the interpreter itself, under the name python3.
[ -e "$dir/python3" ] || ln -s "$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')" "$dir/python3"
for package in $(dpkg-query -W -f='${Package} ${Essential} ${Priority}\n' | awk '$2 == "yes" || $3 == "required" { print $1 }'); do
  for program in $(dpkg -L "$package" 2>/dev/null | grep -E '^/(usr/)?s?bin/[^/]+$' || true); do
    if [ -x "$program" ] && [ ! -d "$program" ]; then link "$program"; fi
  done
done
# Names that Debian's alternatives give those programs (awk → mawk, pager, editor…).
for name in /usr/bin/* /usr/sbin/*; do
  [ -L "$name" ] && [ ! -e "$dir/$(basename "$name")" ] || continue
  case "$(readlink "$name")" in /etc/alternatives/*) ;; *) continue ;; esac
  target=$(readlink -f "$name")
  if [ -e "$dir/$(basename "$target")" ]; then ln -s "$target" "$dir/$(basename "$name")"; fi
done
