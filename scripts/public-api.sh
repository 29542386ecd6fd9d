#!/usr/bin/env bash
# Keeps the declared public API of the src libraries (PublicAPI.Shipped.txt / PublicAPI.Unshipped.txt,
# checked by Microsoft.CodeAnalysis.PublicApiAnalyzers: RS0016 for a public symbol not declared, RS0017
# for a declared symbol that is gone) in step with the code.
#
#   scripts/public-api.sh update   rewrites every src library's PublicAPI.Unshipped.txt from the current
#                                  code (what PublicAPI.Shipped.txt does not already declare, and
#                                  *REMOVED* lines for shipped symbols that are gone), then runs check
#   scripts/public-api.sh check    builds the src libraries and fails on any RS00xx diagnostic
#
# The libraries are every src/*/*.csproj except Roslyn components (the generator). Both commands build
# them alone (Release, through a temporary .slnx), not the tests. Review the diff of the .txt files:
# it is the change to the public API.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
configuration="${CONFIGURATION:-Release}"

usage() {
    sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

[[ $# -eq 1 ]] || usage
command="$1"
[[ "$command" == update || "$command" == check ]] || usage

projects=()
for project in "$root"/src/*/*.csproj; do
    grep -q '<IsRoslynComponent>true</IsRoslynComponent>' "$project" || projects+=("$project")
done
[[ ${#projects[@]} -gt 0 ]] || { echo "public-api: no src projects found under $root/src" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

{
    echo '<Solution>'
    for project in "${projects[@]}"; do echo "  <Project Path=\"$project\" />"; done
    echo '</Solution>'
} > "$work/src.slnx"

# Builds the libraries; the warnings and errors go to $work/build.log, one per line, each ending in
# "[<project path>]". Returns the build's exit code.
build() {
    echo "public-api: building ${#projects[@]} src projects ($configuration)"
    (cd "$root" && dotnet build "$work/src.slnx" -c "$configuration" -nologo -noConsoleLogger \
        "-flp:LogFile=$work/build.log;Verbosity=quiet;NoSummary" "$@")
}

show_errors() {
    grep -E ': error ' "$work/build.log" | sort -u >&2 || true
}

check() {
    local status=0
    build || status=$?
    local found
    found="$(grep -E '(warning|error) RS00[0-9][0-9]' "$work/build.log" | sort -u || true)"
    if [[ -n "$found" ]]; then
        echo "$found" >&2
        echo "public-api: the declared public API differs from the code (see above; scripts/public-api.sh update rewrites PublicAPI.Unshipped.txt)" >&2
        return 1
    fi
    if [[ $status -ne 0 ]]; then
        show_errors
        echo "public-api: the build failed" >&2
        return $status
    fi
    echo "public-api: the declared public API matches the code in ${#projects[@]} projects"
}

update() {
    local project dir
    for project in "${projects[@]}"; do
        dir="$(dirname "$project")"
        [[ -f "$dir/PublicAPI.Shipped.txt" ]] || printf '#nullable enable\n' > "$dir/PublicAPI.Shipped.txt"
        printf '#nullable enable\n' > "$dir/PublicAPI.Unshipped.txt"
    done

    # With the Unshipped files empty, every undeclared public symbol is an RS0016 and every shipped symbol
    # that is gone an RS0017. As warnings, so one build reports them all.
    local status=0
    build --no-incremental -p:TreatWarningsAsErrors=false || status=$?
    if [[ $status -ne 0 ]]; then
        show_errors
        echo "public-api: the build failed; nothing was written beyond empty PublicAPI.Unshipped.txt files" >&2
        return $status
    fi

    # "<file>(l,c): warning RS0016: Symbol '<symbol>' is not part of the declared public API (<link>) [<project>]"
    # "<file>: warning RS0017: Symbol '<symbol>' is part of the declared API, but is either not public or could not be found (<link>) [<project>]"
    sed -nE \
        -e "s/^.*warning RS0016: Symbol '(.*)' is not part of the declared public API.* \[([^]]*)\]\$/\2\t\1/p" \
        -e "s/^.*warning RS0017: Symbol '(.*)' is part of the declared API, but .* \[([^]]*)\]\$/\2\t*REMOVED*\1/p" \
        "$work/build.log" | LC_ALL=C sort -u > "$work/symbols.tsv"

    for project in "${projects[@]}"; do
        dir="$(dirname "$project")"
        {
            printf '#nullable enable\n'
            awk -F '\t' -v p="$project" '$1 == p { print $2 }' "$work/symbols.tsv" | LC_ALL=C sort -u
        } > "$dir/PublicAPI.Unshipped.txt"
        echo "public-api: $(($(wc -l < "$dir/PublicAPI.Unshipped.txt") - 1)) lines in ${dir#"$root"/}/PublicAPI.Unshipped.txt"
    done

    # Anything the rewrite cannot settle (another RS00xx, a symbol the messages did not carry) shows here.
    check
}

"$command"
