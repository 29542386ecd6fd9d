using System.Runtime.ExceptionServices;
using XCall.Marshal;
using XCall.Runtime.CompilerServices;

namespace XCall.Runtime;

/// <summary>
/// Consumes a stream the peer produces: pulls batches of items, one request ahead of the item being read
/// (docs/remoting.md, "Streams"). The producer runs only to answer a request, so it is at most the batch being
/// read and the one asked for ahead of the consumer.
/// </summary>
// Design: one consumer at a time, as for any IAsyncEnumerator (no locks). _items holds the batch being read,
// _index the item last returned; _ahead is the request for the next batch, sent as soon as a batch is read (its
// reply waits in the call until the consumer needs it). Cancellation by the consumer's token fails the request in
// flight (its cancel frame cancels the producer's wait) and closes the stream with the producer's token cancelled.
internal sealed class RemoteStreamEnumerator<T, TItems> : IAsyncEnumerator<T> where TItems : IStreamItems<T>
{
    private readonly StreamProxy<T, TItems> _proxy;
    private readonly CancellationToken _token;
    private readonly T[] _items;
    private int _count;
    private int _index = -1;
    private T _current = default!;
    private PendingCall? _ahead;
    private ValueTask _aheadSent;
    private ExceptionDispatchInfo? _aheadFailure;
    private bool _last; // the batch in _items is the producer's last
    private bool _over; // nothing more to read: the last batch read out, a failure, or a cancellation
    private Task? _closing;
    private bool _disposed;

    public RemoteStreamEnumerator(StreamProxy<T, TItems> proxy, CancellationToken token)
    {
        _proxy = proxy;
        _token = token;
        _items = new T[TItems.BatchItems(proxy.Connection.Options)];
    }

    public T Current => _current;

    public ValueTask<bool> MoveNextAsync()
    {
        int next = _index + 1;
        if (next < _count && !_token.IsCancellationRequested)
        {
            _index = next;
            _current = _items[next];
            return new ValueTask<bool>(true);
        }
        return MoveNextSlow();
    }

    private async ValueTask<bool> MoveNextSlow()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        while (true)
        {
            if (_token.IsCancellationRequested)
            {
                Cancelled();
            }
            int next = _index + 1;
            if (next < _count)
            {
                _index = next;
                _current = _items[next];
                return true;
            }
            if (_over || _last)
            {
                _over = true;
                return false;
            }
            if (_ahead is null && _aheadFailure is null)
            {
                RequestAhead(); // the first batch; each later one is asked for as soon as the one before is read
            }
            if (_aheadFailure is { } failure)
            {
                _over = true;
                _aheadFailure = null;
                failure.Throw();
            }
            PendingCall call = _ahead!;
            _ahead = null;
            try
            {
                await _aheadSent.ConfigureAwait(false);
                Read(call);
            }
            catch (Exception ex)
            {
                _over = true;
                if (ex is XCallProtocolException protocol)
                {
                    call.CloseOnMalformedReply(protocol);
                }
                if (_token.IsCancellationRequested)
                {
                    Cancelled();
                }
                throw;
            }
            finally
            {
                call.End();
            }
            if (!_last)
            {
                RequestAhead();
            }
        }
    }

    private void Cancelled()
    {
        _over = true;
        _closing ??= Close(cancel: true);
        _token.ThrowIfCancellationRequested();
    }

    /// <summary>Asks for the next batch; a failure to send is kept for the read that needs it, after the items read.</summary>
    private void RequestAhead()
    {
        try
        {
            PendingCall call = Begin(StreamDispatcher<T, TItems>.NextMethod);
            try
            {
                MarshalWriter writer = call.Arguments();
                writer.Write(_items.Length);
                _aheadSent = call.SendAsync(ref writer, _token);
            }
            catch
            {
                call.Abort();
                call.End();
                throw;
            }
            _ahead = call;
        }
        catch (Exception ex)
        {
            _aheadFailure = ExceptionDispatchInfo.Capture(ex);
        }
    }

    private PendingCall Begin(uint method) =>
        _proxy.Begin(method) ?? throw new XCallDisconnectedException(
            _proxy.Connection.RemoteEndpoint, "the link the stream came over was lost; a stream does not survive a reconnect");

    private void Read(PendingCall call)
    {
        MarshalReader reader = call.GetReplyReader();
        byte last = reader.Read<byte>();
        if (last > 1)
        {
            throw new XCallProtocolException($"Invalid stream batch flag {last}.");
        }
        _count = 0;
        _index = -1;
        _count = TItems.ReadBatch(ref reader, _items);
        reader.EnsureFullyConsumed();
        _last = last == 1;
    }

    /// <summary>Asks the producer to stop and waits until it is disposed; a stream that is gone needs no close.</summary>
    private async Task Close(bool cancel)
    {
        try
        {
            PendingCall call = Begin(StreamDispatcher<T, TItems>.CloseMethod);
            ValueTask sent;
            try
            {
                MarshalWriter writer = call.Arguments();
                writer.WriteBoolean(cancel);
                sent = call.SendAsync(ref writer, default);
            }
            catch
            {
                call.Abort();
                call.End();
                throw;
            }
            try
            {
                await sent.ConfigureAwait(false);
                call.EndVoidReply();
            }
            finally
            {
                call.End();
            }
        }
        catch (Exception ex) when (ex is XCallDisconnectedException or ObjectDisposedException)
        {
            // The peer, or the link the stream came over, is gone, and the producer with it.
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (_disposed)
        {
            return;
        }
        _disposed = true;
        if (!_over && !_last)
        {
            _closing ??= Close(cancel: false); // sent before waiting for the request ahead: a producer that waits stops
        }
        try
        {
            if (_ahead is { } call)
            {
                _ahead = null;
                try
                {
                    await _aheadSent.ConfigureAwait(false);
                }
                catch (Exception)
                {
                    // The batch asked for ahead is not wanted any more, nor its failure.
                }
                finally
                {
                    call.End();
                }
            }
            if (_closing is { } closing)
            {
                await closing.ConfigureAwait(false);
            }
        }
        finally
        {
            _proxy.Dispose(); // the reference goes: the peer forgets the producer
        }
    }
}
