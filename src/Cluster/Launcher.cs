namespace XCall.Cluster;

/// <summary>The launcher whose environment variables said who this process is.</summary>
public enum Launcher
{
    /// <summary>No launcher: a process started alone, a world of one.</summary>
    None,

    /// <summary>Open MPI's <c>mpirun</c> (<c>OMPI_COMM_WORLD_*</c>).</summary>
    OpenMpi,

    /// <summary>MPICH or Intel MPI (<c>PMI_RANK</c>, <c>PMI_SIZE</c>).</summary>
    Mpich,

    /// <summary>Slurm's <c>srun</c> (<c>SLURM_PROCID</c>, <c>SLURM_NTASKS</c>, ...).</summary>
    Slurm,

    /// <summary>The torchrun convention (<c>RANK</c>, <c>WORLD_SIZE</c>, <c>MASTER_ADDR</c>, <c>MASTER_PORT</c>).</summary>
    Torchrun,

    /// <summary>XCall's own variables (<c>XCALL_RANK</c>, <c>XCALL_SIZE</c>), as <c>xcall run</c> sets them.</summary>
    XCall,
}
