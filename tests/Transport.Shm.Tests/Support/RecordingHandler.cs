using XCall.Marshal;

namespace XCall.Transport.Shm.Tests.Support;

/// <summary>Keeps a copy of every frame it receives.</summary>
internal sealed class RecordingHandler : IFrameHandler
{
    public List<(FrameHeader Header, byte[] Payload)> Frames { get; } = [];

    public Exception? ClosedWith { get; private set; }

    public int ClosedCount { get; private set; }

    public MarshalLimits Limits => MarshalLimits.Default;

    public void OnFrame(in FrameHeader header, ref MarshalReader payload)
    {
        byte[] copy = new byte[payload.Remaining];
        payload.ReadBlock(copy);
        lock (Frames)
        {
            Frames.Add((header, copy));
        }
    }

    public void OnClosed(Exception? error)
    {
        ClosedWith = error;
        ClosedCount++;
    }
}
