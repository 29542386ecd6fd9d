namespace XCall.Domain;

/// <summary>A stream from the other side of a load context (see <see cref="DomainStreams"/>).</summary>
internal sealed class DomainStream<T>(IAsyncEnumerable<T> source, DomainLink link, Func<T, DomainLink, T>? copy) : IAsyncEnumerable<T>
{
    public IAsyncEnumerator<T> GetAsyncEnumerator(CancellationToken cancellationToken = default)
    {
        ThrowIfClosed(link);
        IAsyncEnumerator<T> inner;
        try
        {
            inner = source.GetAsyncEnumerator(cancellationToken);
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            throw DomainCopy.ToRemote(ex);
        }
        return new Enumerator(inner, link, copy);
    }

    private static void ThrowIfClosed(DomainLink link)
    {
        if (link.IsClosed)
        {
            throw new XCallDisconnectedException(link.Endpoint, "the domain host was disposed");
        }
    }

    private sealed class Enumerator(IAsyncEnumerator<T> inner, DomainLink link, Func<T, DomainLink, T>? copy) : IAsyncEnumerator<T>
    {
        private T _current = default!;

        public T Current => _current;

        public ValueTask<bool> MoveNextAsync()
        {
            ThrowIfClosed(link);
            ValueTask<bool> move;
            try
            {
                move = inner.MoveNextAsync();
                if (move.IsCompleted)
                {
                    bool more = move.Result; // once: the producer's source may be reused after it
                    if (more)
                    {
                        Take();
                    }
                    return new ValueTask<bool>(more);
                }
            }
            catch (Exception ex) when (ex is not OperationCanceledException)
            {
                throw DomainCopy.ToRemote(ex);
            }
            return MoveNextSlow(move);
        }

        private async ValueTask<bool> MoveNextSlow(ValueTask<bool> move)
        {
            try
            {
                bool more = await move.ConfigureAwait(false);
                ThrowIfClosed(link);
                if (more)
                {
                    Take();
                }
                return more;
            }
            catch (Exception ex) when (ex is not (OperationCanceledException or XCallDisconnectedException))
            {
                throw DomainCopy.ToRemote(ex);
            }
        }

        private void Take()
        {
            T item = inner.Current;
            _current = copy is null ? item : copy(item, link);
        }

        public async ValueTask DisposeAsync()
        {
            try
            {
                await inner.DisposeAsync().ConfigureAwait(false);
            }
            catch (Exception ex) when (ex is not OperationCanceledException)
            {
                throw DomainCopy.ToRemote(ex);
            }
        }
    }
}
