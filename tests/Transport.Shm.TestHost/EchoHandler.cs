using System.Buffers;
using XCall.Marshal;
using XCall.Transport;

namespace XCall.Transport.Shm.TestHost;

/// <summary>
/// The test server: answers every Call frame with a Reply frame carrying the same payload, written with
/// BeginFrame / CommitFrame straight into the channel. <see cref="HangMethod"/> calls get no reply (for
/// "crash mid-call" tests).
/// </summary>
public sealed class EchoHandler(FrameChannel channel, Action<string>? log = null) : IFrameHandler
{
    /// <summary>Calls with this method id are announced ("IN CALL") and never answered.</summary>
    public const uint HangMethod = 0xDEAD;

    /// <summary>Calls with this method id are answered after as many milliseconds as their first byte says.</summary>
    public const uint SlowMethod = 0x5105;

    private long _frames;

    public MarshalLimits Limits => MarshalLimits.Default;

    public long Frames => Interlocked.Read(ref _frames);

    public TaskCompletionSource<Exception?> Closed { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public void OnFrame(in FrameHeader header, ref MarshalReader payload)
    {
        Interlocked.Increment(ref _frames);
        if (header.Kind != FrameKind.Call)
        {
            return;
        }
        if (header.MethodId == HangMethod)
        {
            log?.Invoke("IN CALL");
            return;
        }
        if (header.MethodId == SlowMethod)
        {
            byte[] copy = new byte[payload.Remaining];
            payload.ReadBlock(copy);
            Thread.Sleep(copy.Length > 0 ? copy[0] : 0);
            IBufferWriter<byte> slow = channel.BeginFrame(new FrameHeader(FrameKind.Reply, header.CallId, 0, header.MethodId));
            slow.Write(copy);
            channel.CommitFrame();
            return;
        }
        IBufferWriter<byte> output = channel.BeginFrame(new FrameHeader(FrameKind.Reply, header.CallId, 0, header.MethodId));
        try
        {
            long remaining = payload.Remaining;
            while (remaining > 0)
            {
                Span<byte> span = output.GetSpan(1);
                int n = (int)Math.Min(span.Length, remaining);
                payload.ReadBlock(span[..n]);
                output.Advance(n);
                remaining -= n;
            }
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
        log?.Invoke(error is null ? "CLOSED" : $"CLOSED {error.GetType().Name}: {error.Message}");
        Closed.TrySetResult(error);
    }
}
