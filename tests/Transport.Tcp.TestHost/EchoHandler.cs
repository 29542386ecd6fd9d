using XCall.Marshal;
using XCall.Transport;

namespace XCall.Transport.Tcp.TestHost;

/// <summary>Answers every Call frame with a Reply carrying the same payload, from the receive thread.</summary>
public sealed class EchoHandler(FrameChannel channel) : IFrameHandler
{
    private readonly TaskCompletionSource<Exception?> _closed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _closeCount;

    public MarshalLimits Limits => MarshalLimits.Default;

    /// <summary>Completes with OnClosed's argument.</summary>
    public Task<Exception?> Closed => _closed.Task;

    /// <summary>How often OnClosed was called (must end at 1).</summary>
    public int CloseCount => Volatile.Read(ref _closeCount);

    public long FramesReceived;

    /// <summary>The channel this handler answers on.</summary>
    public FrameChannel Channel => channel;

    public void OnFrame(in FrameHeader header, ref MarshalReader payload)
    {
        Interlocked.Increment(ref FramesReceived);
        if (header.Kind != FrameKind.Call)
        {
            return;
        }
        ReadOnlySpan<byte> bytes = payload.ReadBytesInPlace((int)payload.Remaining);
        var writer = new MarshalWriter(channel.BeginFrame(new FrameHeader(FrameKind.Reply, header.CallId, header.ObjectId, header.MethodId)));
        try
        {
            writer.WriteBlock(bytes);
            writer.Flush();
        }
        catch
        {
            channel.AbortFrame();
            throw;
        }
        channel.CommitFrame();
    }

    public void OnClosed(Exception? error)
    {
        Interlocked.Increment(ref _closeCount);
        _closed.TrySetResult(error);
    }
}
