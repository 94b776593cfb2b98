#!/usr/bin/env bash
# Lifeline for tmux, as a TPM plugin (or `run-shell /path/to/lifeline.tmux` in
# tmux.conf). The lifeline daemon (sink kind "tmux") keeps the global user option
# @lifeline up to date on every tmux server: this script only places
# #{@lifeline} in the status line. It starts nothing and polls nothing.
#
#   set -g @plugin 'lifeline/lifeline'     # or: run-shell /usr/share/lifeline/tmux/lifeline.tmux
#   set -g @lifeline_position 'right'       # 'right': before status-right; 'left': after status-left
#
# Without @lifeline_position nothing is changed: put #{@lifeline} where you like.
# Running it again (tmux source-file) does not add it twice.
set -eu

position=$(tmux show-option -gqv @lifeline_position)
case "$position" in
  right) option=status-right ;;
  left) option=status-left ;;
  *) exit 0 ;;
esac

current=$(tmux show-option -gqv "$option")
case "$current" in
  *'#{@lifeline}'*) exit 0 ;;
esac

if [ "$option" = status-right ]; then
  tmux set-option -g "$option" "#{@lifeline} $current"
else
  tmux set-option -g "$option" "$current #{@lifeline} "
fi
