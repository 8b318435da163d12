from crmatrix.pipeline import jobs, locations
from crmatrix.stages import install_system
from crmatrix.systems import install

with jobs.job(snakemake.log[0], snakemake.output):
    install_system.run(
        system=snakemake.wildcards.system,
        install_conf=install.job_install(
            snakemake.wildcards.system, dict(snakemake.params.install), snakemake.input.get("constraints")
        ),
        out=snakemake.output[0],
        mirrors=locations.mirrors(),
    )
