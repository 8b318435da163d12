# crmatrix: pinned corpora -> symbols -> indexes -> (dataset x system x arm) runs -> phase matrix.
# Wiring only; the stages live in workflow/rules/, the work in the crmatrix library.
from snakemake.utils import min_version

min_version("9.0")


# `--configfile FILE` replaces the default matrix instead of being merged into it.
if not config:

    configfile: "config/config.yaml"


include: "workflow/rules/common.smk"


rule all:
    input:
        "results/matrix/phase-matrix.json",
        "results/matrix/phase-matrix.md",
    default_target: True


include: "workflow/rules/corpora.smk"
include: "workflow/rules/symbols.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/index.smk"
include: "workflow/rules/datasets.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/aggregate.smk"
