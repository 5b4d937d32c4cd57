#!/bin/sh
# Builds the addon of an earlier commit into bench/quality/data/baseline/REF/ (git-ignored) and
# prints its path, for `score.js --baseline=PATH`: the same harness run then scores and times that
# build beside this checkout's (bench/quality/ab.ts). Run from the repository root after
# `sh scripts/setup.sh`; a build already there is reused.
#
#   sh bench/quality/baseline.sh REF
set -e
ref=${1:?usage: sh bench/quality/baseline.sh REF}
commit=$(git rev-parse --short "$ref^{commit}")
dir=bench/quality/data/baseline/$commit
if [ ! -f "$dir/build/Release/matte.node" ]; then
  rm -rf "$dir"
  mkdir -p "$dir"
  git archive "$commit" | tar -x -C "$dir"
  ln -s "$PWD/node_modules" "$dir/node_modules"
  (cd "$dir" && npx --no-install cmake-js compile --out build --log-level error) >&2
fi
echo "$PWD/$dir/build/Release/matte.node"
