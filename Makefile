# The two commands a new user needs: `make run` and `make test`.
VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
CORES   ?= 8
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1

.PHONY: run test lint report bench clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || python3.11 -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install -q -c constraints.txt -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/snakemake --cores $(CORES) all

test: $(STAMP)
	$(PY) -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/snakemake --lint

report: $(STAMP)
	$(VENV)/bin/snakemake --cores $(CORES) all --report results/report.html

# By hand, not in CI: speed and memory targets (needs `make run` first and ../shared).
bench: $(STAMP)
	$(PY) benchmarks/engine.py

clean:
	rm -rf results logs .snakemake
