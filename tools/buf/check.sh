#!/bin/sh
# Contract hygiene for protos/ with the pinned buf in tools/buf/node_modules:
#   lint      buf lint (rules in protos/buf.yaml)
#   breaking  buf breaking against the previous commit (BUF_AGAINST_REF, default HEAD~1);
#             skipped with a message when there is no such commit (first commit, shallow
#             clone, no git) or it has no protos/.
# Usage: tools/buf/check.sh [lint|breaking|all]   (default: all; runs from any directory)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
# The package's own launcher: npm runs with --no-bin-links, since symlinks in the tree
# would break `openenv validate` at the repository root.
buf="$root/tools/buf/node_modules/@bufbuild/buf/bin/buf"
cd "$root"
if [ ! -f "$buf" ]; then
	echo "buf is not installed: run 'npm ci --prefix tools/buf' (make lint does it)" >&2
	exit 2
fi

lint() {
	node "$buf" lint protos
	echo "buf lint: ok"
}

breaking() {
	ref=${BUF_AGAINST_REF:-HEAD~1}
	if ! sha=$(git rev-parse --verify --quiet "$ref^{commit}" 2>/dev/null); then
		echo "buf breaking: skipped, no previous commit $ref to compare with"
		return 0
	fi
	if ! git cat-file -e "$sha:protos" 2>/dev/null; then
		echo "buf breaking: skipped, $ref has no protos/"
		return 0
	fi
	# The common git dir, so this works in linked worktrees too; the commit by hash.
	gitdir=$(cd "$(git rev-parse --git-common-dir)" && pwd)
	node "$buf" breaking protos --against "$gitdir#format=git,ref=$sha,subdir=protos"
	echo "buf breaking: ok against $ref ($sha)"
}

case "${1:-all}" in
lint) lint ;;
breaking) breaking ;;
all)
	lint
	breaking
	;;
*)
	echo "usage: $0 [lint|breaking|all]" >&2
	exit 2
	;;
esac
