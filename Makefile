# The two commands a new user needs: `make run` and `make test`.
VENV    ?= .venv
PY      := $(VENV)/bin/python
SMK     := $(VENV)/bin/snakemake
STAMP   := $(VENV)/.installed
CORES   ?= $(shell nproc)
# Another matrix: `make run CONFIG=config/seed.yaml` (the target goes before --configfile,
# which would read a later target as a second config file).
CONFIG  ?=
CONFIGFLAGS := $(if $(CONFIG),--configfile $(CONFIG))
# More Snakemake flags, e.g. SNAKEFLAGS=-n (show the plan) or SNAKEFLAGS='--forcerun evaluate_arm'
SNAKEFLAGS ?=
# A dry run (SNAKEFLAGS=-n) plans the jobs only, so there is nothing to report yet.
DRYRUN  := $(filter -n --dry-run --dryrun,$(SNAKEFLAGS))
export HF_HUB_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1

.PHONY: run resume test lint report bench clean

# pip's own output is the progress: a line per package collected, then the install.
$(STAMP): pyproject.toml constraints.txt
	@echo "crmatrix: 1/2 a virtual environment in $(VENV)"
	test -x $(PY) || python3.11 -m venv $(VENV) || python3 -m venv $(VENV)
	@echo "crmatrix: 2/2 crmatrix and its dependencies (constraints.txt): 2.4 GB; 6 min on 2 idle cores, 9 to 17 on busy ones"
	$(PY) -m pip install -c constraints.txt -e '.[test,models]'
	touch $(STAMP)
	@echo "crmatrix: $(VENV) is ready"

# A run that dies without releasing Snakemake's lock (kill -9, power loss) leaves it in
# .snakemake/locks; a run that merely fails releases it. Snakemake's lock files name no owner,
# so the run holding the lock writes its PID beside them (the Snakefile's onstart): a lock
# whose owner still runs is a live run here; one whose owner is gone, a killed run that
# `make resume` recovers; one with no owner recorded may be either.
LOCK_OWNER := .snakemake/locks/crmatrix-owner.pid
# Sets $owner to the PID of the live run that holds the lock here, else to nothing. kill -0
# succeeds on a zombie too (a killed snakemake not yet reaped, for a second or so after kill -9):
# an owner in state Z is gone. Its state from /proc on Linux, else from ps (macOS has no /proc).
LIVE_OWNER = owner=$$(cat $(LOCK_OWNER) 2>/dev/null); kill -0 "$$owner" 2>/dev/null \
  && case "$$(sed 's/.*) //' /proc/$$owner/stat 2>/dev/null || ps -o stat= -p $$owner 2>/dev/null)" in \
  *Z*) false;; esac || owner=
RESUME := make resume$(if $(CONFIG), CONFIG=$(CONFIG))
define RUN
$(SMK) --profile profiles/local --cores $(CORES) all $(SNAKEFLAGS) $(CONFIGFLAGS) || { status=$$?; \
  if [ -n "$$(ls -A .snakemake/locks 2>/dev/null)" ]; then $(LIVE_OWNER); \
    if [ -n "$$owner" ]; then \
      echo "crmatrix: another run is going on in this directory (snakemake, PID $$owner) and holds the lock in .snakemake/locks: let it finish, or stop it (kill $$owner) and then: $(RESUME)" >&2; \
    elif [ -f $(LOCK_OWNER) ]; then \
      echo "crmatrix: an earlier run was killed (its snakemake, PID $$(cat $(LOCK_OWNER)), is gone) and left its lock in .snakemake/locks; recover with: $(RESUME)" >&2; \
    else \
      echo "crmatrix: an earlier run was killed and left its lock in .snakemake/locks; if no other run is going on in this directory, recover with: $(RESUME)" >&2; \
    fi; \
  fi; exit $$status; }
$(if $(DRYRUN),@echo "crmatrix: a dry run: the plan is above; nothing was run",$(RUN_DONE))
endef
define RUN_DONE
$(SMK) --profile profiles/local --cores $(CORES) all $(CONFIGFLAGS) --report results/report.html
@echo "crmatrix: the matrix is in results/matrix/phase-matrix.md (and .json)"
@test ! -f results/matrix/gate.txt || cat results/matrix/gate.txt
@echo "crmatrix: the charts are in results/plots/ (SVG, PNG, HTML; all of them with the tables: results/plots/index.html)"
@echo "crmatrix: the report is results/report.html"
endef

run: $(STAMP)
	$(if $(CONFIG),$(VENV)/bin/crmatrix validate $(CONFIG))
	@$(RUN)

# Unlock, then finish the interrupted run: the profile's rerun-incomplete redoes the jobs
# that were cut short; everything that finished stays. Never while a run is live here:
# unlocking would let a second run start beside it.
resume: $(STAMP)
	@$(LIVE_OWNER); if [ -n "$$owner" ]; then echo "crmatrix: a run is going on in this directory (snakemake, PID $$owner): make resume would unlock it and start a second run beside it; let it finish, or stop it (kill $$owner) first" >&2; exit 1; fi
	$(SMK) --unlock all $(CONFIGFLAGS)
	@$(RUN)

test: $(STAMP)
	$(PY) -m pytest -q

# ruff (Python), snakefmt (the Snakefile and rules) and Snakemake's own linter; all must be clean.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/snakefmt --check Snakefile workflow/rules/
	$(SMK) --lint

report: $(STAMP)
	$(SMK) --profile profiles/local --cores $(CORES) all $(SNAKEFLAGS) $(CONFIGFLAGS) --report results/report.html

# By hand, not in CI: speed and memory targets (needs `make run` first and ../shared).
bench: $(STAMP)
	$(PY) benchmarks/engine.py
	$(PY) benchmarks/pipeline.py

clean:
	rm -rf results logs .snakemake
