# fiar protocol v1 (see PROTOCOL.md): ignore unknown lines and keys.
function field(key,    i, kv) {
    for (i = 2; i <= NF; i++) {
        split($i, kv, "=")
        if (kv[1] == key) return substr($i, length(key) + 2)
    }
    return ""
}
BEGIN { srand() }
$1 == "hello" { print "hello name=awk version=1.0 author=arena"; fflush(); next }
$1 == "game" {
    columns = field("columns") + 0; rows = field("rows") + 0
    n = split(field("start"), start, "/")
    for (c = 1; c <= columns; c++) base[c] = (start[c] == "-" || start[c] == "") ? 0 : length(start[c])
    seed = field("seed"); if (seed != "") srand(seed + 0)  # the game's seed: the same game again
    next
}
$1 == "turn" {
    for (c = 1; c <= columns; c++) h[c] = base[c]
    m = field("moves")
    if (m != "-") {
        n = split(m, moves, ",")
        for (i = 1; i <= n; i++) {
            c = substr(moves[i], 2) + 0
            if (substr(moves[i], 1, 1) == "p") h[c]--; else h[c]++
        }
    }
    k = 0
    for (c = 1; c <= columns; c++) if (h[c] < rows) open[++k] = c
    print "move d" open[int(rand() * k) + 1]; fflush()
    next
}
$1 == "quit" { exit }
