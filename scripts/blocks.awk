# Cuts a C/CUDA file into top-level blocks: text between blank lines outside
# any braces (a function with the comment above it, a group of #defines, ...).
# Writes DIR/NNNN.txt (the block as written), DIR/NNNN.code (the same without
# comments and blank lines) and DIR/keys ("NNNN<TAB>the name it defines").
# Used by scripts/diff.sh (make diff) and scripts/code_hash.sh.
# usage: awk -v dir=DIR -f scripts/blocks.awk FILE
function name_of(s,   t) {            # the name a block defines, from its first code line
    t = s
    gsub(/__launch_bounds__\([^)]*\)/, "", t)
    if (t ~ /^#[ \t]*include/) return "#include"
    if (t ~ /^#[ \t]*(define|undef)[ \t]/) { sub(/^#[ \t]*(define|undef)[ \t]+/, "", t); sub(/[^A-Za-z0-9_].*/, "", t); return "#define " t }
    if (t ~ /^#/) { gsub(/[ \t]+/, " ", t); return t }
    if (t ~ /^typedef[^(]*\(\*[A-Za-z_][A-Za-z0-9_]*\)/) { sub(/^[^(]*\(\*/, "", t); sub(/\).*/, "", t); return "typedef " t }
    if (t ~ /^(typedef[ \t]+)?(struct|union|enum)[ \t]+[A-Za-z_]/) { sub(/^typedef[ \t]+/, "", t); split(t, w, /[ \t{]+/); return w[1] " " w[2] }
    if (t ~ /\(/) { sub(/\(.*/, "", t); sub(/.*[^A-Za-z0-9_]/, "", t); return t "()" }
    sub(/[ \t]*[=;\[].*/, "", t); sub(/.*[^A-Za-z0-9_]/, "", t)
    if (t == "" || length(t) < 2) { t = s; gsub(/[ \t]+/, " ", t); t = substr(t, 1, 50) }   # no name: the line itself
    return t
}
function strip(s,   out, i, c, q) {   # s without its // comment (not inside a string)
    out = ""; q = 0
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c == "\"" && substr(s, i - 1, 1) != "\\") q = !q
        if (!q && c == "/" && substr(s, i + 1, 1) == "/") break
        out = out c
    }
    sub(/[ \t]+$/, "", out); return out
}
function flush() {
    if (nl == 0) return
    k++; f = sprintf("%s/%04d", dir, k)
    printf "%s", text > (f ".txt"); close(f ".txt")
    printf "%s", code > (f ".code"); close(f ".code")
    if (first == "") { key = text; sub(/\n.*/, "", key); gsub(/^[ \t\/*-]+|[ \t]+$/, "", key); key = "comment: " substr(key, 1, 50) }
    else key = name_of(first)
    seen[key]++; if (seen[key] > 1) key = key " #" seen[key]
    printf "%04d\t%s\n", k, key > (dir "/keys")
    text = ""; code = ""; first = ""; nl = 0
}
{
    line = $0; c = line
    # comments: /* ... */ (possibly over lines) and // to the end of the line
    if (incom) { if (c ~ /\*\//) { sub(/.*\*\//, "", c); incom = 0 } else c = "" }
    while (c ~ /\/\*/) {
        if (c ~ /\/\*.*\*\//) sub(/\/\*([^*]|\*+[^*\/])*\*+\//, "", c)
        else { sub(/\/\*.*/, "", c); incom = 1 }
    }
    c = strip(c)
    if (depth == 0 && !incom && line ~ /^[ \t]*$/) { flush(); next }
    text = text line "\n"; nl++
    if (c !~ /^[ \t]*$/) { code = code c "\n"; if (first == "") first = c }
    t = c; opens = gsub(/\{/, "", t); t = c; closes = gsub(/\}/, "", t)
    depth += opens - closes; if (depth < 0) depth = 0
}
END { flush(); close(dir "/keys") }
