namespace XCall.Communicator;

/// <summary>
/// What every rank serves its peers: messages arrive here and wait for the receive that matches them. Small
/// messages come one way; large ones come as a synchronous call whose block the receiver copies straight into the
/// matching receive's buffer (from the sender's memory when the transport lends it). Ranks on one node write
/// small messages straight into the receiver's eager inbox instead (<see cref="Eager.EagerInbox"/>), and a message
/// that comes as a call first delivers those its sender wrote before it.
/// </summary>
[Remotable]
internal interface IMailbox
{
    /// <summary>A message of <paramref name="payload"/> from world rank <paramref name="source"/>.</summary>
    [OneWay]
    void Post(int source, long context, int tag, ReadOnlyMemory<byte> payload);

    /// <summary>A message that the sender waits on until a receive has matched it (or the call is cancelled).</summary>
    Task PostSyncAsync(int source, long context, int tag, byte[] payload, CancellationToken cancellationToken);

    /// <summary>A large message of bytes (or of values of another type, as bytes).</summary>
    void DeliverBytes(int source, long context, int tag, LentSpan<byte> payload);

    /// <summary>A large message of <see cref="int"/>s.</summary>
    void DeliverInt32s(int source, long context, int tag, LentSpan<int> payload);

    /// <summary>A large message of <see cref="long"/>s.</summary>
    void DeliverInt64s(int source, long context, int tag, LentSpan<long> payload);

    /// <summary>A large message of <see cref="float"/>s.</summary>
    void DeliverSingles(int source, long context, int tag, LentSpan<float> payload);

    /// <summary>A large message of <see cref="double"/>s.</summary>
    void DeliverDoubles(int source, long context, int tag, LentSpan<double> payload);

    /// <summary>Reads what <paramref name="source"/> wrote into the eager inbox (it wrote as the reader went to sleep on this connection).</summary>
    [OneWay]
    void Nudge(int source);

    /// <summary>The path of the rank's eager inbox, which a sender on its node maps to write small messages; null when it has none (yet).</summary>
    string? InboxPath();
}
