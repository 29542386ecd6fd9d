namespace XCall.Channels;

/// <summary>A channel with one writer and one reader.</summary>
public sealed class One2One<T> : CspChannel<T>
{
    /// <summary>
    /// Creates the channel: unbuffered when <paramref name="buffer"/> is null. Poison of strength
    /// at most <paramref name="immunity"/> does not affect it.
    /// </summary>
    public One2One(IBuffer<T>? buffer = null, int immunity = 0)
        : base("One2One", sharedReaders: false, sharedWriters: false, buffer, immunity)
    {
    }
}
