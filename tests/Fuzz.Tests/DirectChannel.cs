using System.Buffers;
using System.Runtime.InteropServices;
using XCall.Marshal;
using XCall.Transport;

namespace XCall.Fuzz.Tests;

/// <summary>
/// A frame channel with no thread of its own: a committed frame goes to <see cref="Sent"/> on the sending
/// thread, and <see cref="Deliver"/> hands a frame to this side's handler on the calling thread, so one fuzz
/// input runs start to end on one thread.
/// </summary>
public sealed class DirectChannel(string remoteEndpoint) : FrameChannel
{
    private readonly object _sendLock = new();
    private readonly ArrayBufferWriter<byte> _frame = new();
    private IFrameHandler? _handler;

    /// <summary>Receives every committed frame (header then payload); the array is the caller's.</summary>
    public Action<byte[]>? Sent { get; set; }

    /// <inheritdoc />
    public override string RemoteEndpoint { get; } = remoteEndpoint;

    /// <summary>The limits of this side's handler.</summary>
    public MarshalLimits Limits => _handler!.Limits;

    /// <inheritdoc />
    public override void Start(IFrameHandler handler) => _handler = handler;

    /// <summary>
    /// Hands <paramref name="frame"/> (a header, then the payload) to this side's handler as a transport's
    /// receive loop does; a protocol error comes out of here, as it would close the transport's connection.
    /// </summary>
    public void Deliver(ReadOnlySpan<byte> frame)
    {
        if (frame.Length < FrameHeader.Size)
        {
            throw new XCallProtocolException("Frame shorter than its header.");
        }
        FrameHeader header = MemoryMarshal.Read<FrameHeader>(frame);
        var reader = new MarshalReader(frame[FrameHeader.Size..], _handler!.Limits);
        _handler.OnFrame(header, ref reader);
    }

    /// <inheritdoc />
    public override IBufferWriter<byte> BeginFrame(in FrameHeader header, long deadline)
    {
        Monitor.Enter(_sendLock);
        _frame.ResetWrittenCount();
        FrameHeader copy = header;
        _frame.Write(MemoryMarshal.AsBytes(new ReadOnlySpan<FrameHeader>(in copy)));
        return _frame;
    }

    /// <inheritdoc />
    public override void CommitFrame()
    {
        byte[] frame = _frame.WrittenSpan.ToArray();
        Monitor.Exit(_sendLock);
        Sent?.Invoke(frame);
    }

    /// <inheritdoc />
    public override void AbortFrame() => Monitor.Exit(_sendLock);

    /// <inheritdoc />
    public override void Dispose() => _handler?.OnClosed(null);
}
