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

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || python3.11 -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install -q -c constraints.txt -e '.[test,models]'
	touch $(STAMP)

# A run that dies without releasing Snakemake's lock (kill -9, power loss) leaves it in
# .snakemake/locks; a run that merely fails releases it. So a lock left after a failed
# run means: either another run is going on here, or `make resume` recovers.
define RUN
$(SMK) --profile profiles/local --cores $(CORES) all $(SNAKEFLAGS) $(CONFIGFLAGS) || { status=$$?; \
  if [ -n "$$(ls -A .snakemake/locks 2>/dev/null)" ]; then \
    echo "crmatrix: an earlier run was killed and left its lock in .snakemake/locks; if no other run is going on in this directory, recover with: make resume$(if $(CONFIG), CONFIG=$(CONFIG))" >&2; \
  fi; exit $$status; }
$(if $(DRYRUN),,$(SMK) --profile profiles/local --cores $(CORES) all $(CONFIGFLAGS) --report results/report.html)
@echo "crmatrix: the matrix is in results/matrix/phase-matrix.md (and .json)"
@test ! -f results/matrix/gate.txt || cat results/matrix/gate.txt
@echo "crmatrix: the charts are in results/plots/ (SVG, PNG, HTML; all of them with the tables: results/plots/index.html)"
@echo "crmatrix: the report is results/report.html"
endef

run: $(STAMP)
	$(if $(CONFIG),$(VENV)/bin/crmatrix validate $(CONFIG))
	@$(RUN)

# Unlock, then finish the interrupted run: the profile's rerun-incomplete redoes the jobs
# that were cut short; everything that finished stays.
resume: $(STAMP)
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
