using System.ComponentModel;

namespace XCall.Runtime.CompilerServices;

/// <summary>How generated proxies make the calls of methods that return <see cref="IAsyncEnumerable{T}"/>.</summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public static class RemoteStreams
{
    /// <summary>
    /// The stream a method returns: each enumeration calls method <paramref name="methodId"/> through
    /// <paramref name="proxy"/> (asynchronously, on its first <c>MoveNextAsync</c>, as a local iterator method runs
    /// on its first one), then pulls the items of the stream the call returned. The method's
    /// <paramref name="cancellationToken"/> and the enumerator's token both cancel it.
    /// </summary>
    public static IAsyncEnumerable<T> Call<T, TItems>(ProxyBase proxy, uint methodId, StreamArgumentsWriter? arguments, CancellationToken cancellationToken)
        where TItems : IStreamItems<T> =>
        new StreamCall<T, TItems>(proxy, methodId, arguments, cancellationToken);
}
