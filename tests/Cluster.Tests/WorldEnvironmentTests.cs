namespace XCall.Cluster.Tests;

public sealed class WorldEnvironmentTests
{
    private static WorldEnvironment Detect(params (string Name, string Value)[] variables) =>
        WorldEnvironment.Detect(variables.ToDictionary(v => v.Name, v => v.Value), "host1", 4242);

    [Fact]
    public void A_process_started_alone_is_a_world_of_one()
    {
        WorldEnvironment world = Detect(("PATH", "/usr/bin"));
        Assert.Equal((Launcher.None, 0, 1, 0, "host1", true), (world.Launcher, world.Rank, world.Size, world.LocalRank, world.Node, world.OneNode));
        Assert.Null(world.StoreAddress);
    }

    [Fact]
    public void Open_MPI_on_one_node_meets_at_a_shared_memory_store_named_by_its_job()
    {
        WorldEnvironment world = Detect(("OMPI_COMM_WORLD_RANK", "2"), ("OMPI_COMM_WORLD_SIZE", "4"), ("OMPI_COMM_WORLD_LOCAL_RANK", "2"),
            ("OMPI_COMM_WORLD_LOCAL_SIZE", "4"), ("PMIX_NAMESPACE", "1612972033"));
        Assert.Equal((Launcher.OpenMpi, 2, 4, 2, true), (world.Launcher, world.Rank, world.Size, world.LocalRank, world.OneNode));
        Assert.Equal("1612972033", world.JobId);
        Assert.Equal("shm://xcall-store-1612972033", world.StoreAddress);
    }

    [Fact]
    public void Open_MPI_across_nodes_without_a_store_variable_has_no_store_address()
    {
        WorldEnvironment world = Detect(("OMPI_COMM_WORLD_RANK", "3"), ("OMPI_COMM_WORLD_SIZE", "4"), ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
            ("OMPI_COMM_WORLD_LOCAL_SIZE", "2"));
        Assert.False(world.OneNode);
        Assert.Null(world.StoreAddress);
        Assert.Equal("ppid4242", world.JobId);
    }

    [Fact]
    public void MPICH_reads_PMI_variables()
    {
        WorldEnvironment world = Detect(("PMI_RANK", "1"), ("PMI_SIZE", "3"), ("MPI_LOCALRANKID", "1"), ("MPI_LOCALNRANKS", "3"));
        Assert.Equal((Launcher.Mpich, 1, 3, 1, true), (world.Launcher, world.Rank, world.Size, world.LocalRank, world.OneNode));
        Assert.Equal("shm://xcall-store-ppid4242", world.StoreAddress);
    }

    [Fact]
    public void Slurm_takes_its_node_from_the_expanded_list_and_its_store_from_the_first_node()
    {
        WorldEnvironment world = Detect(("SLURM_PROCID", "5"), ("SLURM_NTASKS", "8"), ("SLURM_LOCALID", "1"), ("SLURM_NODEID", "2"),
            ("SLURM_JOB_NODELIST", "cn[01-03,07]"), ("SLURM_JOB_ID", "123456"), ("SLURM_NNODES", "4"));
        Assert.Equal((Launcher.Slurm, 5, 8, 1, "cn03", false), (world.Launcher, world.Rank, world.Size, world.LocalRank, world.Node, world.OneNode));
        Assert.Equal("123456", world.JobId);
        Assert.Equal($"tcp://cn01:{WorldEnvironment.SlurmStoreBasePort + 3456}/xcall-store-123456", world.StoreAddress);
    }

    [Fact]
    public void Slurm_prefers_the_step_node_list_and_the_daemons_node_name()
    {
        WorldEnvironment world = Detect(("SLURM_PROCID", "0"), ("SLURM_NTASKS", "2"), ("SLURM_NODEID", "0"),
            ("SLURM_STEP_NODELIST", "b[1-2]"), ("SLURM_JOB_NODELIST", "a[1-4]"), ("SLURMD_NODENAME", "b1"), ("SLURM_JOB_ID", "7"), ("SLURM_STEP_ID", "0"));
        Assert.Equal("b1", world.Node);
        Assert.Equal("7.0", world.JobId);
        Assert.Equal($"tcp://b1:{WorldEnvironment.SlurmStoreBasePort + 7}/xcall-store-7.0", world.StoreAddress);
    }

    [Fact]
    public void Slurm_on_one_node_meets_over_shared_memory()
    {
        WorldEnvironment world = Detect(("SLURM_PROCID", "1"), ("SLURM_NTASKS", "4"), ("SLURM_LOCALID", "1"), ("SLURM_NODEID", "0"),
            ("SLURM_JOB_NODELIST", "localhost"), ("SLURM_JOB_ID", "99"));
        Assert.True(world.OneNode);
        Assert.Equal("shm://xcall-store-99", world.StoreAddress);
    }

    [Fact]
    public void Torchrun_meets_at_the_port_after_MASTER_PORT()
    {
        WorldEnvironment world = Detect(("RANK", "3"), ("WORLD_SIZE", "8"), ("LOCAL_RANK", "3"), ("LOCAL_WORLD_SIZE", "4"),
            ("MASTER_ADDR", "10.0.0.5"), ("MASTER_PORT", "29500"), ("TORCHELASTIC_RUN_ID", "run-1"));
        Assert.Equal((Launcher.Torchrun, 3, 8, 3, false), (world.Launcher, world.Rank, world.Size, world.LocalRank, world.OneNode));
        Assert.Equal("tcp://10.0.0.5:29501/xcall-store-run-1", world.StoreAddress);
    }

    [Fact]
    public void XCall_variables_as_xcall_run_sets_them()
    {
        WorldEnvironment world = Detect(("XCALL_RANK", "1"), ("XCALL_SIZE", "3"), ("XCALL_JOB_ID", "run77"), ("XCALL_STORE", "tcp://127.0.0.1:5000/xcall-store-run77"));
        Assert.Equal((Launcher.XCall, 1, 3, 1, true), (world.Launcher, world.Rank, world.Size, world.LocalRank, world.OneNode));
        Assert.Equal("run77", world.JobId);
        Assert.Equal("tcp://127.0.0.1:5000/xcall-store-run77", world.StoreAddress);
    }

    [Fact]
    public void XCall_store_variable_wins_over_every_derived_address()
    {
        WorldEnvironment world = Detect(("SLURM_PROCID", "0"), ("SLURM_NTASKS", "2"), ("SLURM_JOB_NODELIST", "a[1-2]"), ("SLURM_JOB_ID", "5"),
            ("XCALL_STORE", "tcp://a2:7000/mine"), ("XCALL_JOB_ID", "job-x"));
        Assert.Equal("tcp://a2:7000/mine", world.StoreAddress);
        Assert.Equal("job-x", world.JobId);
    }

    [Fact]
    public void Launchers_are_tried_in_order_Open_MPI_first()
    {
        WorldEnvironment world = Detect(("OMPI_COMM_WORLD_RANK", "1"), ("OMPI_COMM_WORLD_SIZE", "2"), ("PMI_RANK", "0"), ("PMI_SIZE", "2"),
            ("SLURM_PROCID", "0"), ("SLURM_NTASKS", "2"), ("RANK", "0"), ("WORLD_SIZE", "2"), ("XCALL_RANK", "0"), ("XCALL_SIZE", "2"));
        Assert.Equal((Launcher.OpenMpi, 1), (world.Launcher, world.Rank));
        world = Detect(("PMI_RANK", "1"), ("PMI_SIZE", "2"), ("SLURM_PROCID", "0"), ("SLURM_NTASKS", "2"));
        Assert.Equal((Launcher.Mpich, 1), (world.Launcher, world.Rank));
        world = Detect(("SLURM_PROCID", "1"), ("SLURM_NTASKS", "2"), ("RANK", "0"), ("WORLD_SIZE", "2"));
        Assert.Equal((Launcher.Slurm, 1), (world.Launcher, world.Rank));
        world = Detect(("RANK", "1"), ("WORLD_SIZE", "2"), ("XCALL_RANK", "0"), ("XCALL_SIZE", "2"));
        Assert.Equal((Launcher.Torchrun, 1), (world.Launcher, world.Rank));
    }

    [Theory]
    [InlineData("XCALL_RANK", "x", "XCALL_SIZE", "2")]
    [InlineData("XCALL_RANK", "2", "XCALL_SIZE", "2")]
    [InlineData("XCALL_RANK", "0", "XCALL_SIZE", "0")]
    public void A_malformed_rank_or_size_is_an_error_naming_it(string rankName, string rank, string sizeName, string size) =>
        Assert.Throws<FormatException>(() => Detect((rankName, rank), (sizeName, size)));

    [Fact]
    public void Job_ids_become_valid_server_names() =>
        Assert.Equal("xcall-store-a-b-c", WorldEnvironment.StoreName("a/b:c"));
}
