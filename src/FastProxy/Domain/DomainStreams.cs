using System.ComponentModel;

namespace XCall.Domain;

/// <summary>
/// How an <see cref="IAsyncEnumerable{T}"/> crosses a load context (docs/remoting.md, "Streams"): the other side
/// enumerates the stream itself through a wrapper that copies each item as a domain call copies a value, turns
/// the producer's exceptions into <see cref="RemoteInvocationException"/>, and fails with
/// <see cref="XCallDisconnectedException"/> once the host is disposed. Nothing is batched: the consumer's
/// <c>MoveNextAsync</c> runs the producer's, so the producer is never ahead of the consumer.
/// </summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public static class DomainStreams
{
    /// <summary>
    /// <paramref name="source"/> for the other side of <paramref name="link"/>; <paramref name="copy"/> copies an item
    /// (null: items pass as they are, unmanaged values and strings).
    /// </summary>
    public static IAsyncEnumerable<T>? Copy<T>(IAsyncEnumerable<T>? source, DomainLink link, Func<T, DomainLink, T>? copy) =>
        source is null ? null : new DomainStream<T>(source, link, copy);
}
