# crmatrix: pinned corpora -> symbols -> indexes -> (dataset x system x arm) runs -> phase matrix.
# Wiring only; the stages live in workflow/rules/, the work in the crmatrix library.
import gc
import sys

from snakemake.utils import min_version

from crmatrix import CrmatrixError
from crmatrix.config.yamlfile import read_yaml

# No garbage collection while the plan and the DAG are made: the objects they build all live
# until Snakemake exits, so each collection traverses them for almost nothing; on by the time
# any job runs (onstart below). A no-op of the seed matrix: 3.34 s instead of 3.62
# (benchmarks/results/dag-seed-plus-2026-12-06*.md); its report's peak RSS 560 MB, not 488.
gc.disable()

min_version("9.0")

DEFAULT_CONFIG = "config/config.yaml"

# `--configfile FILE` replaces the default matrix instead of being merged into it (a
# `--config key=value` alone, e.g. force_test=true, names no matrix: the default's keys stay).
# Each config file is read by us too (crmatrix.config.yamlfile.read_yaml): Snakemake's loader
# keeps the last of a repeated key, and its YAML errors name neither file nor line. (A
# `--configfile` it cannot read at all stops Snakemake before this file runs: the docs put
# `crmatrix validate FILE` first.)
DEFAULT_MATRIX = [] if workflow.configfiles else [DEFAULT_CONFIG]
try:
    for config_file in [*workflow.configfiles, *DEFAULT_MATRIX]:
        read_yaml(config_file)
except CrmatrixError as e:
    sys.exit(f"crmatrix: {e}")
if DEFAULT_MATRIX:

    configfile: DEFAULT_CONFIG


include: "workflow/rules/common.smk"


# Once the plan is made and the lock taken, before any job starts (so before Snakemake removes a
# run it would replace): the lock gets its owner's PID, a planned second scoring of a test
# split is refused here (crmatrix.pipeline.rescoring), a local run's scheduler loses the job
# rate limit that makes it pass over the ready jobs hundreds of times a second, the scheduler
# measures a ready job's inputs once, not at each pass, a finished job's inputs are checksummed
# once for all its outputs' records, not once per output (crmatrix.pipeline.scheduling), and a
# local run's light jobs start warm (crmatrix.pipeline.warm).
onstart:
    gc.enable()
    record_lock_owner()
    refuse_rescoring(workflow.dag)
    scheduling.drop_local_rate_limit(workflow.scheduler, workflow.local_exec)
    scheduling.measure_inputs_once(workflow.scheduler)
    scheduling.checksum_inputs_once(workflow.persistence)
    start_warm()


rule all:
    default_target: True
    input:
        matrix_outputs(),


include: "workflow/rules/corpora.smk"
include: "workflow/rules/repositories.smk"
include: "workflow/rules/symbols.smk"
include: "workflow/rules/graph.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/install.smk"
include: "workflow/rules/index.smk"
include: "workflow/rules/datasets.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/plots.smk"
include: "workflow/rules/slices.smk"


# every rule has asked for its code's hash (common.smk's code())
CODE_MEMO.save()
sign_functions(workflow.rules)
# Everything made so far (our modules and their imports, the config, the plan, the rules) lives
# until Snakemake exits: frozen, the collector (on again once jobs run) never traverses it again
# (a no-op of the 1k-job scaling matrix took 2.9 s instead of 3.6 s when the collector ran
# while the DAG was built: benchmarks/results/scaling-31-160-2026-12-03.md).
gc.freeze()
