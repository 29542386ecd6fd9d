using System.Buffers;
using XCall.Marshal;
using XCall.Runtime.CompilerServices;
using XCall.Runtime;
using XCall.Transport;

namespace XCall.Transport.Shm.TestHost;

/// <summary>The test client: sends raw payloads as Call frames through an <see cref="XCallConnection"/>
/// (so waiting goes through <see cref="FrameChannel.WaitForReply"/>) and returns the echoed payload.</summary>
public sealed class EchoClient : IDisposable
{
    public EchoClient(FrameChannel channel, ConnectionOptions? options = null)
    {
        Connection = new XCallConnection(channel, options);
        Connection.Start();
    }

    public XCallConnection Connection { get; }

    /// <summary>One round trip; <paramref name="reply"/> must be as long as <paramref name="payload"/>.</summary>
    public void RoundTrip(ReadOnlySpan<byte> payload, Span<byte> reply, uint methodId = 1)
    {
        PendingCall call = Connection.BeginCall(0, methodId, isAsync: false);
        try
        {
            MarshalWriter writer = call.Arguments();
            writer.WriteBlock(payload);
            call.SendAndWait(ref writer);
            MarshalReader reader = call.GetReplyReader();
            if (reader.Remaining != reply.Length)
            {
                throw new InvalidDataException($"Reply of {reader.Remaining} bytes, expected {reply.Length}.");
            }
            reader.ReadBlock(reply);
        }
        catch
        {
            call.Abort();
            throw;
        }
        finally
        {
            call.End();
        }
    }

    public byte[] RoundTrip(ReadOnlySpan<byte> payload, uint methodId = 1)
    {
        byte[] reply = new byte[payload.Length];
        RoundTrip(payload, reply, methodId);
        return reply;
    }

    public void Dispose() => Connection.Dispose();
}
