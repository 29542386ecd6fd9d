namespace XCall.Channels;

/// <summary>
/// A CSP channel: unbuffered (rendezvous: a write completes when a reader has taken the value)
/// unless given an <see cref="IBuffer{T}"/>. The kinds differ in how many processes may use each
/// end: <see cref="One2One{T}"/>, <see cref="Any2One{T}"/>, <see cref="One2Any{T}"/>, <see cref="Any2Any{T}"/>.
/// </summary>
/// <remarks>
/// A "one" end is checked where it is cheap: a second read (write) that arrives while an earlier
/// one on the same end still waits throws <see cref="InvalidOperationException"/>, and only "one"
/// ends can be guards in an <see cref="Alternative"/>. Two processes that take turns on a "one"
/// end are not detected.
/// </remarks>
public abstract class CspChannel<T>
{
    private readonly ChannelCore<T> _core;

    private protected CspChannel(string kind, bool sharedReaders, bool sharedWriters, IBuffer<T>? buffer, int immunity)
    {
        _core = new ChannelCore<T>(kind, sharedReaders, sharedWriters, buffer, immunity);
        In = new ChannelIn<T>(_core);
        Out = new ChannelOut<T>(_core);
    }

    /// <summary>
    /// How a blocking read, extended read or write on either end waits when it cannot complete at once; null (the
    /// default): it blocks on the operation. The async forms and an <see cref="Alternative"/>'s select are not affected.
    /// </summary>
    public IBlockingWaiter? BlockingWaiter
    {
        get => _core.BlockingWaiter;
        set => _core.BlockingWaiter = value;
    }

    /// <summary>The reading end.</summary>
    public ChannelIn<T> In { get; }

    /// <summary>The writing end.</summary>
    public ChannelOut<T> Out { get; }
}
