namespace XCall.Channels;

/// <summary>
/// Told once when a channel end it registered with may have become ready (an Alternative, or a
/// ChannelReader / ChannelWriter adapter waiting to read or write). A notification is a hint: the
/// listener re-checks readiness under the channel's lock before it acts.
/// </summary>
internal interface IReadinessListener
{
    /// <summary>Called outside the channel's lock, at most once per registration.</summary>
    void Notify();
}
