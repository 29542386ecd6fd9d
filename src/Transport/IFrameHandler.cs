using XCall.Marshal;

namespace XCall.Transport;

/// <summary>Receives the frames of a <see cref="FrameChannel"/>; the call runtime's connection implements it.</summary>
public interface IFrameHandler
{
    /// <summary>The limits the channel applies to the readers it hands to <see cref="OnFrame"/>.</summary>
    MarshalLimits Limits { get; }

    /// <summary>
    /// One incoming frame. <paramref name="payload"/> reads the frame's payload in place and is valid only
    /// during the call; the handler reads everything it needs before returning. A protocol error thrown
    /// from here closes the channel.
    /// </summary>
    void OnFrame(in FrameHeader header, ref MarshalReader payload);

    /// <summary>The channel closed: <paramref name="error"/> is null after an orderly close, else why.</summary>
    void OnClosed(Exception? error);

    /// <summary>
    /// The channel lost its underlying link but will reconnect (a reconnecting channel): every call in
    /// flight fails with <see cref="XCallDisconnectedException"/>, the handler stays open for new calls.
    /// <paramref name="linkGeneration"/> is the lost link's <see cref="FrameChannel.LinkGeneration"/>: what
    /// was exchanged by reference over it is void.
    /// </summary>
    void OnLinkLost(Exception error, int linkGeneration)
    {
    }
}
