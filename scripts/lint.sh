#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make lint: the kernel code must pass
#   - checkpatch.pl --strict (no error, warning or check),
#   - sparse (C=2: every file, built or not) and a W=1 build with no warning
#     and no modpost warning in our files (warnings inside the kernel's own
#     headers are not ours to fix and are ignored);
# the scripts
#   - shellcheck (every level, .shellcheckrc's settings) on the tracked
#     shell scripts: *.sh, those without the suffix found by their #! line,
#     and the bash completion;
#   - flake8 on the tracked Python (*.py, or a python #! line);
# the README's table of where things are must match the tree: every
# path it names exists, and it names every top-level entry; no file of
# the filter core may include, through others, a file that includes it,
# nor a unit (x.c with x.h) one that includes it
# (scripts/include-cycles.py, which also reports, without failing, the
# circles outside the core); and
# debian/changelog's version must be dkms.conf's.
# The build runs on a fresh copy of the sources in build/lint/, so every file
# is compiled every time (a cached object would hide its warnings) and the
# normal build is left alone.  Uses the VM's kernel headers unless KDIR or
# KVER is given.
#
# A clean result is remembered (build/lint-clean/) under a hash of all it
# depends on: the sources checked, this script, checkpatch.pl; for the
# build, the kernel build directory (its path and the stamps of its
# configuration and symbols) and the compiler, sparse and linker
# binaries.  When none of those changed since, the check is not run again
# and says so ("inputs unchanged since its last clean run").  A failure is
# never remembered.  CNF_LINT_FORCE=1 runs every check regardless.
#
#   lint.sh --build    only the W=1 + sparse build (make check runs it for
#                      the 6.12 kernels installed beside the VM's)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CHECKPATCH=$("$ROOT/scripts/kernel-source.sh" dir)/scripts/checkpatch.pl
LINT=$ROOT/build/lint
# Kernel modules of the tests and benchmarks (Makefile's KMOD_DIRS).
KMOD_DIRS="selftests/modules userspace/bench/kmod"
CLEAN=$ROOT/build/lint-clean
cd "$ROOT"

# The kernel sources lint checks and builds: those of the module, the uapi
# header, Kbuild and dkms.conf, and of the test and benchmark modules (no
# build product).
lint_sources() {
	# shellcheck disable=SC2086 # KMOD_DIRS: a list of directories
	find Kbuild dkms.conf module uapi $KMOD_DIRS -type f \
		! -name '*.o' ! -name '*.ko' ! -name '.*.cmd' ! -name '*.mod*' \
		! -name modules.order ! -name Module.symvers 2>/dev/null | LC_ALL=C sort
}

# lint_key VAR PART [KDIR]: VAR = the hash of everything PART's clean
# result depends on (see the top).
lint_key() {
	local -n _key=$1
	local part=$2 kdir=${3:-} f t
	_key=$(
		{
			echo "$part"
			lint_sources | xargs sha256sum
			sha256sum "$ROOT/scripts/lint.sh"
			if [[ $part == checkpatch ]]; then
				sha256sum "$CHECKPATCH" 2>/dev/null
				stat -L -c '%n %s %Y' "$(command -v perl)"
			else
				echo "kdir $(realpath "$kdir")"
				for f in .config Module.symvers Makefile include/generated/autoconf.h \
					 include/generated/utsrelease.h; do
					stat -L -c '%n %s %Y' "$kdir/$f" 2>/dev/null
				done
				# The compiler the kernel was built with, and the tools.
				t=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' "$kdir/.config" 2>/dev/null)
				for f in ${t:-} gcc cc sparse ld; do
					f=$(command -v "$f") && stat -L -c '%n %s %Y' "$f"
				done
			fi
			true
		} | sha256sum | cut -c1-32
	)
}

# cached PART KEY: PART was clean at a run whose inputs hashed to KEY.
cached() {
	[[ ${CNF_LINT_FORCE:-0} != 1 && -f $CLEAN/$1 && $(<"$CLEAN/$1") == "$2" ]]
}
remember() {
	mkdir -p "$CLEAN"
	echo "$2" >"$CLEAN/$1"
}
forget() { rm -f "$CLEAN/$1"; }

# checked PART KDIR CHECK: CHECK (a function) unless PART was clean with
# the same inputs; a clean result remembered, a failure forgotten.
checked() {
	local part=$1 kdir=$2 check=$3 key
	lint_key key "$part" "$kdir"
	if cached "$part" "$key"; then
		echo "lint: $part: inputs unchanged since its last clean run: not run again"
		return 0
	fi
	if "$check"; then
		remember "$part" "$key"
	else
		forget "$part"
		return 1
	fi
}

# shellcheck disable=SC2317 # called through checked
run_checkpatch() {
	local files=() f
	for f in module/*.c module/*.h uapi/linux/*.h selftests/modules/*.c \
		 userspace/bench/kmod/*.c; do
		# *.mod.c are kbuild's, generated.
		[[ -f $f && $f != *.mod.c ]] && files+=("$f")
	done
	if ((${#files[@]} == 0)); then
		echo "lint: checkpatch: no kernel sources found"
		return 1
	fi
	[[ -f $CHECKPATCH ]] || { echo "lint: $CHECKPATCH missing: run scripts/deps.sh"; return 1; }
	echo "lint: checkpatch --strict ${files[*]}"
	# --no-tree: we are not in a kernel tree; exits non-zero on any report.
	perl "$CHECKPATCH" --no-tree --strict --quiet --show-types \
		--no-summary -f "${files[@]}"
}

# Build a copy of the sources with W=1 and sparse; print our warnings.
# The newest Debian kernel's headers are in the sid root
# (scripts/sid-root.sh): their path through it, read here, and the build
# runs in the root, where they are at their own path.
lint_kdir() {
	local k=${KDIR:-/lib/modules/$(KVER=${KVER:-} scripts/kver)/build} sid
	if [[ ! -d $k ]] && sid=$(scripts/sid-root.sh path 2>/dev/null) &&
	   [[ -d $sid$k ]]; then
		k=$sid$k
	fi
	echo "$k"
}

# shellcheck disable=SC2317 # called through checked
run_build_checks() {
	local kdir out rc=0 sid run=()
	kdir=$(lint_kdir)
	if sid=$(scripts/sid-root.sh path 2>/dev/null) && [[ $kdir == "$sid"/* ]]; then
		run=(scripts/sid-root.sh run)
		kdir=${kdir#"$sid"}
	fi
	rm -rf "$LINT"
	mkdir -p "$LINT"
	cp -a Kbuild dkms.conf module uapi "$LINT/"
	for d in $KMOD_DIRS; do
		[[ -d $d ]] || continue
		mkdir -p "$LINT/$(dirname "$d")"
		cp -a "$d" "$LINT/$d"
	done
	find "$LINT" \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' -o -name '*.mod*' \) -delete
	echo "lint: W=1 C=2 build against $kdir"
	out=$LINT/build.log
	"${run[@]}" make -C "$kdir" M="$LINT" W=1 C=2 modules >"$out" 2>&1 || rc=$?
	for d in $KMOD_DIRS; do
		[[ -f $LINT/$d/Kbuild ]] || continue
		"${run[@]}" make -C "$kdir" M="$LINT/$d" W=1 C=2 modules >>"$out" 2>&1 || rc=$?
	done
	if ((rc != 0)); then
		sed "s|$LINT/||g" "$out"
		echo "lint: build failed"
		return 1
	fi
	# Our files' warnings (compiler, sparse) and modpost's, with paths
	# made relative to the repository again.
	if grep -E "^$LINT/[^:]*:[0-9]+(:[0-9]+)?: (warning|error)|WARNING: modpost" "$out" |
			sed "s|$LINT/||g" | grep .; then
		echo "lint: warnings in our sources"
		return 1
	fi
}

# The tracked files (git ls-files; outside a git tree, find's), without
# the fuzzer's corpus.
tracked_files() {
	if git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$ROOT" ls-files
	else
		find . -path ./build -prune -o -type f -printf '%P\n'
	fi | grep -v '^userspace/fuzz/corpus/' | LC_ALL=C sort -u
}

# script_files KIND: the tracked shell (sh) or Python (py) scripts.
script_files() {
	local f first
	while IFS= read -r f; do
		[[ -f $f ]] || continue
		case $1:$f in
		sh:*.sh | sh:*.bash-completion | py:*.py) echo "$f"; continue ;;
		sh:debian/*.preinst | sh:debian/*.postinst | sh:debian/*.prerm | sh:debian/*.postrm)
			echo "$f"; continue ;;
		*:*.*) continue ;;
		esac
		IFS= read -r first <"$f" || continue
		case $1:$first in
		sh:'#!'*bash* | sh:'#!'*sh) echo "$f" ;;
		py:'#!'*python*) echo "$f" ;;
		esac
	done < <(tracked_files)
}

# scripts_key VAR: the hash of what the scripts' clean result depends on.
scripts_key() {
	local -n _skey=$1
	local t
	_skey=$(
		{
			echo scripts
			{ script_files sh; script_files py; } | xargs -r sha256sum
			sha256sum "$ROOT/scripts/lint.sh" "$ROOT/.shellcheckrc"
			for t in shellcheck flake8; do
				t=$(command -v "$t") && stat -L -c '%n %s %Y' "$t"
			done
			true
		} | sha256sum | cut -c1-32
	)
}

# The shell scripts through shellcheck, each on its own and side by side
# (-x follows what a script sources), the Python through flake8.
run_script_checks() {
	local rc=0 sh py
	sh=$(script_files sh)
	py=$(script_files py)
	if ! command -v shellcheck >/dev/null || ! command -v flake8 >/dev/null; then
		echo "lint: shellcheck or flake8 missing: run scripts/deps.sh"
		return 1
	fi
	echo "lint: shellcheck on $(wc -l <<<"$sh") shell scripts, flake8 on $(wc -l <<<"$py") Python ones"
	xargs -r -P "$(nproc)" -n 4 shellcheck -x -f gcc <<<"$sh" || rc=1
	xargs -r flake8 <<<"$py" || rc=1
	return "$rc"
}

# The README's table of where things are against the tree.
readme_checks() {
	local rc=0 p top named
	# shellcheck disable=SC2016 # Markdown's backquotes, not expansions
	named=$(sed -n '/^## Where things are/,/^## [^W]/p' README.md |
		sed -n 's/^| \(`[^|]*\) |.*/\1/p' | grep -o '`[^`]*`' | tr -d '`')
	if [[ -z $named ]]; then
		echo "lint: README.md: no table of where things are"
		return 1
	fi
	for p in $named; do
		[[ -e $p ]] || { echo "lint: README.md names $p, which is not in the tree"; rc=1; }
	done
	for top in $(tracked_files | cut -d/ -f1 | sort -u); do
		case $top in README.md | .gitignore | .shellcheckrc) continue ;; esac
		grep -qx -e "$top" -e "$top/.*" <<<"$named" ||
			{ echo "lint: README.md's table of where things are does not name $top"; rc=1; }
	done
	return "$rc"
}

if [[ ${1:-} == --build ]]; then
	# Each kernel its own copy: check runs them side by side.
	LINT=$ROOT/build/lint-$(KVER=${KVER:-} scripts/kver)
	kdir=$(lint_kdir)
	if checked "build-$(basename "$(realpath "$kdir")")" "$kdir" run_build_checks; then echo "lint: sparse + W=1: clean"; else echo "lint: sparse + W=1: FAILED"; exit 1; fi
	exit 0
fi

status=0
kdir=$(lint_kdir)
if checked checkpatch "" run_checkpatch; then echo "lint: checkpatch: clean"; else echo "lint: checkpatch: FAILED"; status=1; fi
if checked "build-$(basename "$(realpath "$kdir")")" "$kdir" run_build_checks; then echo "lint: sparse + W=1: clean"; else echo "lint: sparse + W=1: FAILED"; status=1; fi
scripts_key key
if cached scripts "$key"; then
	echo "lint: scripts: inputs unchanged since their last clean run: not run again"
elif run_script_checks; then
	remember scripts "$key"
	echo "lint: shellcheck + flake8: clean"
else
	forget scripts
	echo "lint: shellcheck + flake8: FAILED"
	status=1
fi
# debian/changelog's first entry is dkms.conf's version (the one place it
# is written) with a Debian revision: make deb refuses otherwise.
version_checks() {
	local v d
	v=$(sed -n 's/^PACKAGE_VERSION="\([^"]*\)"$/\1/p' dkms.conf)
	d=$(sed -n '1s/^cuckoo-nf (\([^)]*\)) .*/\1/p' debian/changelog)
	[[ -n $v && $d == "$v"-* ]] && return 0
	echo "lint: debian/changelog's version ${d:-(none)} is not dkms.conf's $v-REV: add an entry (dch -v $v-1)"
	return 1
}
if version_checks; then
	echo "lint: debian/changelog: dkms.conf's version"
else
	status=1
fi
if readme_checks; then
	echo "lint: README's table of where things are: matches the tree"
else
	echo "lint: README's table of where things are: FAILED"
	status=1
fi
# The man pages, as lintian reads them for make deb: man's warnings are
# the page's mistakes (a mistyped macro drops a section from the page).
man_checks() {
	local page out rc=0
	for page in $(tracked_files | grep '\.8$'); do
		out=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
		[[ -z $out ]] && continue
		echo "lint: $page: $out"
		rc=1
	done
	return "$rc"
}
if man_checks; then
	echo "lint: man pages: no warning from man"
else
	echo "lint: man pages: FAILED"
	status=1
fi
if python3 scripts/include-cycles.py "$ROOT"; then
	echo "lint: includes: no circle among the core's files or units"
else
	echo "lint: includes: FAILED"
	status=1
fi
exit "$status"
