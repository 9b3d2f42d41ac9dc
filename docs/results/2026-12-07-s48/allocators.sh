# s48's run scripts: the four variants, each with a suffix ('' as they are, -arenas behind 16
# stream arenas).
variants() { for v in mutex lockfree tls stream; do printf '%s ' "$v$1"; done; }
