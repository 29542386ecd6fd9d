using XCall.Marshal;
using XCall.Runtime.CompilerServices;

namespace XCall.Runtime;

/// <summary>The stream a method returns, as its proxy returns it (see <see cref="RemoteStreams.Call{T, TItems}"/>).</summary>
internal sealed class StreamCall<T, TItems>(ProxyBase proxy, uint methodId, StreamArgumentsWriter? arguments, CancellationToken methodToken)
    : IAsyncEnumerable<T> where TItems : IStreamItems<T>
{
    private CancellationToken MethodToken => methodToken;

    public IAsyncEnumerator<T> GetAsyncEnumerator(CancellationToken cancellationToken = default) => new Enumerator(this, cancellationToken);

    /// <summary>Calls the method; its reply carries the stream.</summary>
    private async ValueTask<IAsyncEnumerable<T>> OpenAsync(CancellationToken token)
    {
        XCallConnection connection = proxy.Connection;
        PendingCall? call;
        while ((call = connection.BeginAsyncCall(proxy, methodId)) is null)
        {
            // The link is down: made again first, off the caller's thread, within the call's deadline.
            connection.ContinueCall(await connection.ReconnectAsync(token).ConfigureAwait(false));
        }
        ValueTask sent = Send(call, token);
        try
        {
            await sent.ConfigureAwait(false);
            return Read(call) ?? throw StreamErrors.NullStream(proxy.Dispatcher.GetMethodName(methodId));
        }
        catch (XCallProtocolException e) when (call.CloseOnMalformedReply(e))
        {
            throw;
        }
        finally
        {
            call.End();
        }
    }

    private ValueTask Send(PendingCall call, CancellationToken token)
    {
        try
        {
            MarshalWriter writer = call.Arguments();
            arguments?.Invoke(ref writer);
            return call.SendAsync(ref writer, token);
        }
        catch
        {
            call.Abort();
            call.End();
            throw;
        }
    }

    private static IAsyncEnumerable<T>? Read(PendingCall call)
    {
        MarshalReader reader = call.GetReplyReader();
        IAsyncEnumerable<T>? stream = AsyncStreamMarshaller<T, TItems>.Read(ref reader);
        reader.EnsureFullyConsumed();
        return stream;
    }

    private sealed class Enumerator(StreamCall<T, TItems> owner, CancellationToken enumeratorToken) : IAsyncEnumerator<T>
    {
        private IAsyncEnumerator<T>? _inner;
        private CancellationTokenSource? _linked;

        public T Current => _inner is { } inner ? inner.Current : default!;

        public ValueTask<bool> MoveNextAsync() => _inner is { } inner ? inner.MoveNextAsync() : Open();

        private async ValueTask<bool> Open()
        {
            CancellationToken token = enumeratorToken;
            if (owner.MethodToken.CanBeCanceled)
            {
                if (token.CanBeCanceled)
                {
                    _linked = CancellationTokenSource.CreateLinkedTokenSource(owner.MethodToken, token);
                    token = _linked.Token;
                }
                else
                {
                    token = owner.MethodToken;
                }
            }
            IAsyncEnumerable<T> stream = await owner.OpenAsync(token).ConfigureAwait(false);
            _inner = stream.GetAsyncEnumerator(token);
            return await _inner.MoveNextAsync().ConfigureAwait(false);
        }

        public async ValueTask DisposeAsync()
        {
            try
            {
                if (_inner is { } inner)
                {
                    await inner.DisposeAsync().ConfigureAwait(false);
                }
            }
            finally
            {
                _linked?.Dispose();
            }
        }
    }
}
