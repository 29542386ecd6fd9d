namespace XCall.Channels;

/// <summary>A channel with one writer and any number of readers.</summary>
public sealed class One2Any<T> : CspChannel<T>
{
    /// <summary>
    /// Creates the channel: unbuffered when <paramref name="buffer"/> is null. Poison of strength
    /// at most <paramref name="immunity"/> does not affect it.
    /// </summary>
    public One2Any(IBuffer<T>? buffer = null, int immunity = 0)
        : base("One2Any", sharedReaders: true, sharedWriters: false, buffer, immunity)
    {
    }
}
