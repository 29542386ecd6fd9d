namespace XCall.Channels;

/// <summary>A channel with any number of writers and of readers.</summary>
public sealed class Any2Any<T> : CspChannel<T>
{
    /// <summary>
    /// Creates the channel: unbuffered when <paramref name="buffer"/> is null. Poison of strength
    /// at most <paramref name="immunity"/> does not affect it.
    /// </summary>
    public Any2Any(IBuffer<T>? buffer = null, int immunity = 0)
        : base("Any2Any", sharedReaders: true, sharedWriters: true, buffer, immunity)
    {
    }
}
