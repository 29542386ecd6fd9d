namespace XCall.Channels;

/// <summary>A channel with any number of writers and one reader.</summary>
public sealed class Any2One<T> : CspChannel<T>
{
    /// <summary>
    /// Creates the channel: unbuffered when <paramref name="buffer"/> is null. Poison of strength
    /// at most <paramref name="immunity"/> does not affect it.
    /// </summary>
    public Any2One(IBuffer<T>? buffer = null, int immunity = 0)
        : base("Any2One", sharedReaders: false, sharedWriters: true, buffer, immunity)
    {
    }
}
