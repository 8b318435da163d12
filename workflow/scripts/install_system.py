from crmatrix import jobs, locations
from crmatrix.stages import install_system

with jobs.job(snakemake.log[0], snakemake.output):
    install_system.run(
        system=snakemake.wildcards.system,
        install_conf=dict(snakemake.params.install),
        out=snakemake.output[0],
        mirrors=locations.mirrors(),
    )
