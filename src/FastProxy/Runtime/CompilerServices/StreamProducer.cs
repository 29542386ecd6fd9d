using System.ComponentModel;
using System.Runtime.CompilerServices;
using System.Runtime.ExceptionServices;
using XCall.Domain;
using XCall.Marshal;

namespace XCall.Runtime.CompilerServices;

/// <summary>
/// The producing side of an <see cref="IAsyncEnumerable{T}"/> stream sent to the peer (a result, or an argument):
/// exposed by reference, it serves the consumer's requests for batches from one enumerator of the stream, and
/// closes it when the consumer asks, or when the connection stops exposing it (released, link lost, closed).
/// </summary>
/// <typeparam name="T">The item type.</typeparam>
/// <typeparam name="TItems">How the items travel.</typeparam>
// Design:
// - The consumer asks for one batch at a time (StreamDispatcher: Next), so at most one Next runs; a second one at
//   once is refused (_busy). Next fills a batch while the enumerator's MoveNextAsync completes at once, and sends
//   what it has when it would wait, keeping that pending MoveNextAsync (_pendingMove) for the next request; with
//   nothing yet it awaits it. So the producer runs only while a request is open: the consumer's demand bounds it.
// - A failure after some items were batched is kept (_failure) and thrown to the next request, after those items.
// - Closing (Close from the consumer, or Unexported) sets _shut under _gate, once; every close waits for it. A
//   Next running then is cancelled through the stream's token and waited for (_idle), then the enumerator is
//   disposed, once (_disposed). The token is cancelled only to stop a producer that waits: one suspended at a
//   yield is disposed uncancelled, as `break` in a local await foreach disposes it.
// - Fields other than the lock-protected flags are touched only by the one Next or close running.
[EditorBrowsable(EditorBrowsableState.Never)]
public sealed class StreamProducer<T, TItems> : IExportLifetime where TItems : IStreamItems<T>
{
    private readonly object _gate = new();
    private readonly CancellationTokenSource _cancel = new();
    private IAsyncEnumerable<T>? _source;
    private IAsyncEnumerator<T>? _enumerator;
    private ValueTask<bool> _pendingMove;
    private bool _hasPendingMove;
    private ExceptionDispatchInfo? _failure;
    private bool _ended;
    private T[] _batch = [];
    private bool _busy;
    private bool _disposed;
    private TaskCompletionSource? _idle;
    private TaskCompletionSource? _shut;

    /// <summary>The token the producer gets: as the method's <see cref="CancellationToken"/> argument and as the
    /// enumerator's token; cancelled when the consumer cancels, or when a close finds the producer waiting.</summary>
    public CancellationToken CancellationToken => _cancel.Token;

    /// <summary>
    /// Writes <paramref name="items"/> by reference: this producer, exposed on the writer's connection, will serve it
    /// (null: a null reference). Across a load context (a domain copy) the stream is passed as it is, to be wrapped
    /// for the other side.
    /// </summary>
    public void Write(ref MarshalWriter writer, IAsyncEnumerable<T>? items)
    {
        if (items is null)
        {
            writer.Write(ObjectReferenceMarshaller<object>.NullTag);
            return;
        }
        if (ReferenceEquals(writer.Context, ObjectReferenceMarshaller.Nowhere))
        {
            writer.Write(ObjectReferenceMarshaller<object>.WriterObjectTag);
            writer.Write(0UL);
            return;
        }
        if (writer.Context is DomainCopyScope scope)
        {
            writer.Write(ObjectReferenceMarshaller<object>.PassThroughTag);
            writer.Write(scope.Park(items));
            return;
        }
        if (writer.Context is not XCallConnection connection)
        {
            throw new InvalidOperationException(
                $"An IAsyncEnumerable<{typeof(T).Name}> travels as a stream and needs a connection to travel on; it cannot be written into a standalone buffer.");
        }
        _source = items;
        writer.Write(ObjectReferenceMarshaller<object>.WriterObjectTag);
        writer.Write(connection.ExportObject(this, StreamDispatcher<T, TItems>.Instance));
    }

    /// <summary>Serves a request for at most <paramref name="maxItems"/> items: replies with a batch, the last one
    /// marked as such, or fails with the producer's exception.</summary>
    internal ValueTask Next(ServerCall call, int maxItems)
    {
        lock (_gate)
        {
            if (_busy)
            {
                throw new InvalidOperationException("The stream already serves a request; a consumer asks for one batch at a time.");
            }
            if (_shut is not null)
            {
                throw new ObjectDisposedException($"IAsyncEnumerable<{typeof(T).Name}>", "The stream was closed.");
            }
            _busy = true;
        }
        int max = Math.Min(maxItems, TItems.BatchItems(call.Connection.Options));
        if (_batch.Length < max)
        {
            _batch = new T[max];
        }
        return Fill(call, max);
    }

    private async ValueTask Fill(ServerCall call, int max)
    {
        bool replied = false;
        try
        {
            if (_failure is { } failure)
            {
                _failure = null;
                _ended = true;
                failure.Throw();
            }
            if (_ended)
            {
                Reply(call, 0, last: true);
                replied = true;
                return;
            }
            int count = 0;
            CancellationTokenRegistration onCancel = default;
            try
            {
                _enumerator ??= _source!.GetAsyncEnumerator(_cancel.Token);
                while (count < max)
                {
                    ValueTask<bool> move;
                    if (_hasPendingMove)
                    {
                        move = _pendingMove;
                        _pendingMove = default;
                        _hasPendingMove = false;
                    }
                    else
                    {
                        move = _enumerator.MoveNextAsync();
                    }
                    if (!move.IsCompleted)
                    {
                        if (count > 0)
                        {
                            // Send what is there rather than hold it back while the producer waits.
                            _pendingMove = move;
                            _hasPendingMove = true;
                            break;
                        }
                        if (onCancel == default)
                        {
                            // The consumer cancels through this request's call while the producer waits.
                            onCancel = call.CancellationToken.UnsafeRegister(static s => ((StreamProducer<T, TItems>)s!).Cancel(), this);
                        }
                    }
                    if (!await move.ConfigureAwait(false))
                    {
                        _ended = true;
                        await DisposeEnumerator().ConfigureAwait(false);
                        break;
                    }
                    _batch[count++] = _enumerator.Current;
                }
            }
            catch (Exception ex) when (count > 0)
            {
                _failure = ExceptionDispatchInfo.Capture(ex); // the items before it go first
            }
            finally
            {
                onCancel.Dispose();
            }
            Reply(call, count, last: _ended && _failure is null);
            replied = true;
        }
        catch (Exception)
        {
            _ended = true;
            await DisposeQuietly().ConfigureAwait(false);
            throw;
        }
        finally
        {
            if (!replied)
            {
                EndRequest();
            }
        }
    }

    /// <summary>Sends the batch and ends the request: the consumer may send its next one as soon as it has this one.</summary>
    private void Reply(ServerCall call, int count, bool last)
    {
        MarshalWriter writer = call.BeginReply();
        try
        {
            writer.Write(last ? (byte)1 : (byte)0);
            TItems.WriteBatch(ref writer, _batch.AsSpan(0, count));
        }
        finally
        {
            if (RuntimeHelpers.IsReferenceOrContainsReferences<T>())
            {
                Array.Clear(_batch, 0, count); // the consumer gets them; this side need not keep them alive
            }
        }
        EndRequest();
        call.EndReply(ref writer);
    }

    private void EndRequest()
    {
        TaskCompletionSource? idle;
        lock (_gate)
        {
            _busy = false;
            idle = _idle;
        }
        idle?.TrySetResult();
    }

    /// <summary>
    /// Closes the stream at the consumer's request and replies once the producer is disposed; an exception of its
    /// disposal (a finally block that threw) fails the call. <paramref name="cancel"/>: the consumer cancelled, so
    /// the producer's token is cancelled first.
    /// </summary>
    internal async ValueTask Close(ServerCall call, bool cancel)
    {
        if (cancel)
        {
            Cancel();
        }
        await Shut().ConfigureAwait(false);
        call.ReplyVoid();
    }

    /// <summary>Stops the producer: cancels it if a request is waiting for it, waits for that request, disposes the
    /// enumerator. Every close waits for the first one, which does the work.</summary>
    private Task Shut()
    {
        TaskCompletionSource done;
        Task? running = null;
        lock (_gate)
        {
            if (_shut is not null)
            {
                return _shut.Task;
            }
            _shut = done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            if (_busy)
            {
                _idle = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                running = _idle.Task;
            }
        }
        _ = ShutCore(running, done);
        return done.Task;
    }

    private async Task ShutCore(Task? running, TaskCompletionSource done)
    {
        try
        {
            if (running is not null)
            {
                Cancel();
                await running.ConfigureAwait(false);
            }
            if (_hasPendingMove)
            {
                // The producer waits for something: cancel it, and let its MoveNextAsync end before disposing.
                Cancel();
                _hasPendingMove = false;
                try
                {
                    await _pendingMove.ConfigureAwait(false);
                }
                catch (Exception)
                {
                    // A producer stopped by its token throws; nobody asks for its items any more.
                }
                _pendingMove = default;
            }
            await DisposeEnumerator().ConfigureAwait(false);
            done.SetResult();
        }
        catch (Exception ex)
        {
            done.SetException(ex);
        }
    }

    private ValueTask DisposeEnumerator()
    {
        if (_disposed || _enumerator is null)
        {
            _disposed = true;
            return default;
        }
        _disposed = true;
        return _enumerator.DisposeAsync();
    }

    private async Task DisposeQuietly()
    {
        try
        {
            await DisposeEnumerator().ConfigureAwait(false);
        }
        catch (Exception)
        {
            // The producer already failed; that failure is the one reported.
        }
    }

    private void Cancel()
    {
        try
        {
            _cancel.Cancel();
        }
        catch (AggregateException)
        {
            // A callback the producer registered threw; the cancel itself happened.
        }
    }

    void IExportLifetime.Unexported() =>
        // Off the thread that dropped it (often the receiving thread): the producer's cancel callbacks and finally
        // blocks are user code.
        ThreadPool.UnsafeQueueUserWorkItem(static p => _ = p.ShutQuietly(), this, preferLocal: false);

    private async Task ShutQuietly()
    {
        try
        {
            await Shut().ConfigureAwait(false);
        }
        catch (Exception)
        {
            // Nobody is left to report to: the consumer released the stream or is gone.
        }
    }
}
