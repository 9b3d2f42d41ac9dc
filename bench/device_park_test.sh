#!/usr/bin/env bash
# CTest `device_park`: .ci/device-park in a scratch repository of two runs and the page's plots.
# Parking keeps the named run and plots/ and moves the other run beside the repository; a second
# park is refused while one is parked; an unknown run to keep is refused before anything moves;
# --restore brings every file back (git status clean) and a second --restore is refused.
#   device_park_test.sh DEVICE_PARK WORK_DIR
set -u
script=$(realpath "$1") work=$2
rm -rf "$work"; mkdir -p "$work/repo/.ci" "$work/repo/docs/results"
cd "$work/repo" || exit 1
fail() { echo "device_park: $*"; cat "$work/log" 2> /dev/null; exit 1; }
cp "$script" .ci/device-park
for d in run1 run2 plots; do mkdir -p docs/results/$d/final; echo "$d" > docs/results/$d/final/x.json; done
git init -q . && git add -A && git -c user.name=t -c user.email=t@t commit -qm base || fail "git setup"
bash .ci/device-park nosuch > "$work/log" 2>&1; rc=$?
[ $rc = 2 ] || fail "an unknown run to keep: exit $rc, not 2"
[ -z "$(git status --short)" ] && [ ! -e ../cudapool-parked ] || fail "an unknown run to keep moved something"
bash .ci/device-park run2 > "$work/log" 2>&1 || fail "park: exit $?"
[ -d docs/results/run2 ] && [ -d docs/results/plots ] || fail "the kept run or plots/ moved"
[ ! -e docs/results/run1 ] && [ -f ../cudapool-parked/run1/final/x.json ] || fail "run1 not parked beside the repository"
bash .ci/device-park run2 > "$work/log" 2>&1 && fail "a second park while one is parked succeeded"
bash .ci/device-park --restore > "$work/log" 2>&1 || fail "restore: exit $?"
[ -z "$(git status --short)" ] || { git status --short > "$work/log"; fail "not every file came back"; }
[ ! -e ../cudapool-parked ] || fail "the parking folder is left behind"
bash .ci/device-park --restore > "$work/log" 2>&1 && fail "a restore with nothing parked succeeded"
echo "device_park: ok"
