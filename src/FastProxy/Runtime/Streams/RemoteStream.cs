using XCall.Runtime.CompilerServices;

namespace XCall.Runtime;

/// <summary>
/// A stream the peer produces, as the consumer gets it (an argument, or a result read from a reply). Its producer
/// serves one enumeration, so it is enumerated once; a method that returns a stream makes a new one per enumeration
/// (<see cref="RemoteStreams"/>).
/// </summary>
internal sealed class RemoteStream<T, TItems>(StreamProxy<T, TItems> proxy) : IAsyncEnumerable<T> where TItems : IStreamItems<T>
{
    private int _taken;

    public IAsyncEnumerator<T> GetAsyncEnumerator(CancellationToken cancellationToken = default)
    {
        if (Interlocked.Exchange(ref _taken, 1) != 0)
        {
            throw new InvalidOperationException(
                $"This IAsyncEnumerable<{typeof(T).Name}> came from the peer, whose producer serves one enumeration; enumerate it once (a method returning a stream makes a new one each time it is enumerated).");
        }
        return new RemoteStreamEnumerator<T, TItems>(proxy, cancellationToken);
    }
}
