using XCall.Transport.Shm;
using XCall.Transport.Tcp;

namespace XCall.Streams;

/// <summary>Settings of a byte stream over an XCall transport (<see cref="XCallStreams"/>).</summary>
public sealed record XCallStreamOptions
{
    /// <summary>Smallest allowed <see cref="ReceiveWindow"/>: 4 KiB.</summary>
    public const int MinReceiveWindow = 4096;

    /// <summary>The defaults.</summary>
    public static XCallStreamOptions Default { get; } = new();

    /// <summary>
    /// Bytes the peer may send ahead of this side's reader: what this side buffers at most. A writer whose peer
    /// has not read that far waits (backpressure). Default 1 MiB.
    /// </summary>
    public int ReceiveWindow { get; init; } = 1 << 20;

    /// <summary>Settings of the shared-memory connection for <c>shm://</c> addresses.</summary>
    public ShmOptions Shm { get; init; } = ShmOptions.Default;

    /// <summary>Settings of the TCP connection for <c>tcp://</c> addresses.</summary>
    public TcpOptions Tcp { get; init; } = TcpOptions.Default;

    internal int ValidatedWindow() => ReceiveWindow >= MinReceiveWindow
        ? ReceiveWindow
        : throw new ArgumentOutOfRangeException(nameof(ReceiveWindow), ReceiveWindow, $"ReceiveWindow must be at least {MinReceiveWindow} bytes.");
}
