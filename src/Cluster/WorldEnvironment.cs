using System.Collections;
using System.Globalization;
using System.Net;

namespace XCall.Cluster;

/// <summary>
/// Who this process is in its world, as its launcher's environment says: rank, size, local rank, node, the
/// job it belongs to, and where rank 0's store is. Read once with <see cref="Detect()"/>; a process started
/// alone is a world of one.
/// </summary>
public sealed record WorldEnvironment
{
    /// <summary>The variable naming this rank (<c>xcall run</c> sets it).</summary>
    public const string RankVariable = "XCALL_RANK";

    /// <summary>The variable naming the world's size.</summary>
    public const string SizeVariable = "XCALL_SIZE";

    /// <summary>The variable naming this rank's index among the ranks of its node (optional).</summary>
    public const string LocalRankVariable = "XCALL_LOCAL_RANK";

    /// <summary>The variable holding the address of rank 0's store; it wins over every address derived from another launcher.</summary>
    public const string StoreVariable = "XCALL_STORE";

    /// <summary>The variable naming the job; the names of a world's shared-memory servers start with it.</summary>
    public const string JobIdVariable = "XCALL_JOB_ID";

    /// <summary>The variable naming the host other nodes reach this process at (optional; see <see cref="ClusterOptions.Host"/>).</summary>
    public const string HostVariable = "XCALL_HOST";

    /// <summary>The variable naming this process's node (optional): it wins over the launcher's node and the host name, for nodes that share a host name (containers, network namespaces).</summary>
    public const string NodeVariable = "XCALL_NODE";

    /// <summary>Under Slurm the store listens on the first node at this port plus the job id modulo 10,000 (below Linux's ephemeral ports).</summary>
    public const int SlurmStoreBasePort = 20_000;

    /// <summary>
    /// The launchers in the order they are tried, with the variables that hold rank, size, local rank and the
    /// number of ranks on the node (null: the launcher has none that says whether every rank is on one node;
    /// XCall's own variables come from <c>xcall run</c>, which starts every rank on its own machine).
    /// </summary>
    private static readonly LauncherVariables[] s_launchers =
    [
        new(Launcher.OpenMpi, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"),
        new(Launcher.Mpich, "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
        new(Launcher.Slurm, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", null),
        new(Launcher.Torchrun, "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"),
        new(Launcher.XCall, RankVariable, SizeVariable, LocalRankVariable, null),
    ];

    /// <summary>The launcher whose variables were read.</summary>
    public required Launcher Launcher { get; init; }

    /// <summary>This process's rank, 0 to <see cref="Size"/> - 1.</summary>
    public required int Rank { get; init; }

    /// <summary>How many ranks the world has.</summary>
    public required int Size { get; init; }

    /// <summary>This process's index among the ranks of its node.</summary>
    public required int LocalRank { get; init; }

    /// <summary>The name of this process's node (<c>XCALL_NODE</c>, else Slurm's node name, else the host name).</summary>
    public required string Node { get; init; }

    /// <summary>True when the launcher says every rank runs on this node.</summary>
    public required bool OneNode { get; init; }

    /// <summary>The job's id as the launcher gives it, or a stand-in (see <see cref="Detect(IReadOnlyDictionary{string, string}, string, int)"/>).</summary>
    public required string JobId { get; init; }

    /// <summary>
    /// The address of rank 0's store (<c>tcp://host:port/name</c> or <c>shm://name</c>), or null when the
    /// environment gives no way to find it (a world of one needs none).
    /// </summary>
    public required string? StoreAddress { get; init; }

    /// <summary>The host from <see cref="HostVariable"/>, or null.</summary>
    public string? Host { get; init; }

    /// <summary>The environment of this process.</summary>
    public static WorldEnvironment Detect()
    {
        var variables = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (DictionaryEntry entry in System.Environment.GetEnvironmentVariables())
        {
            if (entry.Key is string key && entry.Value is string value)
            {
                variables[key] = value;
            }
        }
        return Detect(variables, Dns.GetHostName(), ParentProcessId());
    }

    /// <summary>
    /// Reads <paramref name="variables"/>, trying Open MPI, MPICH / Intel MPI, Slurm, torchrun and XCall's own
    /// variables in that order; none of them makes a world of one. The job id comes from <c>XCALL_JOB_ID</c>,
    /// Slurm's job and step, Open MPI's PMIx namespace or torchrun's run id; an MPI launcher that gives none is
    /// taken as one job per parent process (<paramref name="parentProcessId"/>: the ranks of one node share
    /// their launcher's daemon).
    /// </summary>
    /// <param name="variables">The environment variables.</param>
    /// <param name="hostName">This machine's host name.</param>
    /// <param name="parentProcessId">The parent process's id, or 0 when unknown.</param>
    /// <exception cref="FormatException">A variable the launcher sets is not a number, or the rank is outside the size.</exception>
    public static WorldEnvironment Detect(IReadOnlyDictionary<string, string> variables, string hostName, int parentProcessId)
    {
        ArgumentNullException.ThrowIfNull(variables);
        ArgumentNullException.ThrowIfNull(hostName);
        string? Get(string name) => variables.TryGetValue(name, out string? value) && value.Length > 0 ? value : null;
        int Number(string name, int fallback)
        {
            string? text = Get(name);
            if (text is null)
            {
                return fallback;
            }
            return int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out int value)
                ? value
                : throw new FormatException($"{name}='{text}' is not a non-negative number.");
        }

        string node = Get(NodeVariable) ?? Get("SLURMD_NODENAME") ?? hostName;
        string? nodeList = Get("SLURM_STEP_NODELIST") ?? Get("SLURM_JOB_NODELIST");
        IReadOnlyList<string> slurmNodes = nodeList is null ? [] : SlurmNodeList.Expand(nodeList);
        LauncherVariables? found = null;
        foreach (LauncherVariables candidate in s_launchers)
        {
            if (Get(candidate.Rank) is not null && Get(candidate.Size) is not null)
            {
                found = candidate;
                break;
            }
        }
        Launcher launcher = found?.Launcher ?? Launcher.None;
        int rank = found is null ? 0 : Number(found.Rank, 0);
        int size = found is null ? 1 : Number(found.Size, 1);
        int localRank = found is null ? 0 : Number(found.LocalRank, rank);
        bool oneNode = found?.LocalSize is not { } localSize || Number(localSize, 0) == size;
        if (launcher == Launcher.Slurm)
        {
            int nodeId = Number("SLURM_NODEID", 0);
            if (Get(NodeVariable) is null && Get("SLURMD_NODENAME") is null && nodeId < slurmNodes.Count)
            {
                node = slurmNodes[nodeId];
            }
            oneNode = slurmNodes.Count == 1 || Number("SLURM_NNODES", 0) == 1 || Number("SLURM_STEP_NUM_NODES", 0) == 1;
        }
        if (size < 1 || rank >= size)
        {
            throw new FormatException($"{launcher}: rank {rank} is not in a world of size {size}.");
        }

        string? slurmJob = Get("SLURM_JOB_ID") is { } job ? Get("SLURM_STEP_ID") is { } step ? $"{job}.{step}" : job : null;
        string jobId = Get(JobIdVariable) ?? slurmJob ?? Get("PMIX_NAMESPACE") ?? Get("OMPI_MCA_ess_base_jobid") ?? Get("TORCHELASTIC_RUN_ID")
            ?? (launcher is Launcher.OpenMpi or Launcher.Mpich && parentProcessId > 0 ? $"ppid{parentProcessId}" : $"pid{System.Environment.ProcessId}");

        string? store = Get(StoreVariable);
        if (store is null && launcher == Launcher.Torchrun && Get("MASTER_ADDR") is { } master)
        {
            // torchrun's own agent holds MASTER_PORT with its rendezvous store: take the next port.
            store = $"tcp://{master}:{Number("MASTER_PORT", 29500) + 1}/{StoreName(jobId)}";
        }
        if (store is null && slurmJob is not null && slurmNodes.Count > 0 && !oneNode)
        {
            int port = SlurmStoreBasePort + (int)(long.Parse(Get("SLURM_JOB_ID")!, NumberStyles.None, CultureInfo.InvariantCulture) % 10_000);
            store = $"tcp://{slurmNodes[0]}:{port}/{StoreName(jobId)}";
        }
        if (store is null && oneNode && size > 1)
        {
            store = $"shm://{StoreName(jobId)}";
        }

        return new WorldEnvironment
        {
            Launcher = launcher,
            Rank = rank,
            Size = size,
            LocalRank = localRank,
            Node = node,
            OneNode = oneNode,
            JobId = jobId,
            StoreAddress = store,
            Host = Get(HostVariable),
        };
    }

    /// <summary>The server name of a job's store: <c>xcall-store-</c> and the job id, in the characters an address name allows.</summary>
    public static string StoreName(string jobId) => "xcall-store-" + SafeName(jobId);

    /// <summary><paramref name="text"/> with every character an address name does not allow replaced by '-'.</summary>
    internal static string SafeName(string text) =>
        string.Create(text.Length, text, static (span, source) =>
        {
            for (int i = 0; i < source.Length; i++)
            {
                char c = source[i];
                span[i] = char.IsAsciiLetterOrDigit(c) || c is '-' or '_' or '.' ? c : '-';
            }
        });

    private sealed record LauncherVariables(Launcher Launcher, string Rank, string Size, string LocalRank, string? LocalSize);

    private static int ParentProcessId()
    {
        try
        {
            // /proc/self/stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses, so read after the last ')'.
            string stat = File.ReadAllText("/proc/self/stat");
            string[] fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
            return int.Parse(fields[1], NumberStyles.None, CultureInfo.InvariantCulture);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException or IndexOutOfRangeException)
        {
            return 0;
        }
    }
}
