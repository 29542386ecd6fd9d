using XCall.Marshal;

namespace XCall.Transport.Tcp.Tests.Support;

internal static class Frames
{
    /// <summary>
    /// Sends one frame with <paramref name="payload"/> through the channel's public send API; <paramref name="batched"/>
    /// commits it with <see cref="FrameChannel.CommitFrameBatched"/>.
    /// </summary>
    public static void Send(FrameChannel channel, FrameKind kind, ulong callId, ReadOnlySpan<byte> payload, uint methodId = 7, bool batched = false)
    {
        var writer = new MarshalWriter(channel.BeginFrame(new FrameHeader(kind, callId, 0, methodId)));
        try
        {
            writer.WriteBlock(payload);
            writer.Flush();
        }
        catch
        {
            channel.AbortFrame();
            throw;
        }
        if (batched)
        {
            channel.CommitFrameBatched();
        }
        else
        {
            channel.CommitFrame();
        }
    }

    /// <summary>A deterministic payload that differs per seed and per position.</summary>
    public static byte[] Payload(int size, int seed)
    {
        byte[] bytes = new byte[size];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    /// <summary>Sends a call and waits for its reply.</summary>
    public static async Task<byte[]> CallAsync(FrameChannel channel, ReplyCollector replies, ulong callId, byte[] payload)
    {
        Task<byte[]> reply = replies.Reply(callId);
        Send(channel, FrameKind.Call, callId, payload);
        byte[] result = await reply.WaitAsync(Timeouts.Long);
        replies.Forget(callId);
        return result;
    }
}
