namespace XCall.Fuzz.Tests;

/// <summary>Runs one input: returns normally when the reader accepted it or refused it the documented way.</summary>
public delegate void FuzzInput(ReadOnlySpan<byte> input);

/// <summary>A reader under fuzzing: its name (the argument of scripts/fuzz.sh), how to run one input, and its seeds.</summary>
public sealed record FuzzTarget(string Name, string Reads, FuzzInput Run, Func<IEnumerable<(string Name, byte[] Input)>> Seeds)
{
    /// <summary>Every target, in the order scripts/fuzz.sh lists them.</summary>
    public static IReadOnlyList<FuzzTarget> All { get; } =
    [
        new("marshal", "MarshalReader and the generic marshallers, whole and chunked", MarshalTarget.Run, MarshalTarget.Seeds),
        new("args", "generated argument readers and the graph deserializer, behind a real call header", FrameTargets.Arguments, FrameTargets.ArgumentSeeds),
        new("frame", "the connection's frame handler: header checks, dispatch, arguments", FrameTargets.Frame, FrameTargets.FrameSeeds),
        new("tcp", "the tcp preamble and framing, through a real listener on loopback", SocketTargets.Tcp, SocketTargets.TcpSeeds),
        new("shm", "the shm rendezvous handshake, through a real listener", SocketTargets.Shm, SocketTargets.ShmSeeds),
        new("ring", "the records a peer publishes in a shared-memory ring, read by its consumer", RingTarget.Run, RingTarget.Seeds),
    ];

    /// <summary>How many inputs the readers refused with a protocol error so far (in-process targets only):
    /// the replay checks that every seed is accepted, so the seeds reach past the checks.</summary>
    public static int Refusals => s_refusals;

    private static int s_refusals;

    internal static void CountRefusal() => Interlocked.Increment(ref s_refusals);

    public static FuzzTarget Find(string name) =>
        All.FirstOrDefault(t => t.Name == name) ?? throw new ArgumentException($"Unknown fuzz target '{name}' (targets: {string.Join(", ", All.Select(t => t.Name))}).");

    /// <summary>Reads a corpus file: hex text (whitespace ignored) when it ends in .hex, else raw bytes.</summary>
    public static byte[] ReadInput(string path) =>
        path.EndsWith(".hex", StringComparison.Ordinal)
            ? Convert.FromHexString(string.Concat(File.ReadAllText(path).Where(c => !char.IsWhiteSpace(c))))
            : File.ReadAllBytes(path);
}
