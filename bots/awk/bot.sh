#!/bin/sh
# A bot in POSIX sh + awk: drops into a random column that is not full (any variant).
# mawk buffers its input unless run with -W interactive.
dir=$(dirname "$0")
if awk -W version 2>/dev/null | grep -q mawk; then
    exec awk -W interactive -f "$dir/bot.awk"
fi
exec awk -f "$dir/bot.awk"
