using System.Collections.Concurrent;
using System.Diagnostics.Tracing;
using XCall.Diagnostics;

namespace XCall.Profile.Tests.Support;

/// <summary>
/// Enables the XCall EventSource in this process and keeps the <c>CallCompleted</c> events of the
/// connections whose endpoint starts with a prefix (so other tests' calls do not count).
/// </summary>
internal sealed class CallEventListener : EventListener
{
    // Initialized before the base constructor runs, which already calls OnEventSourceCreated for
    // existing sources (and may deliver events); fields set in this constructor's body are null then.
    private readonly ConcurrentQueue<CallEvent> _events = new();
    private readonly object _lock = new();
    private readonly string? _endpointPrefix;
    private int _expected = int.MaxValue;
    private TaskCompletionSource? _reached;

    /// <summary>Starts listening for events whose endpoint starts with <paramref name="endpointPrefix"/>.</summary>
    public CallEventListener(string endpointPrefix) => _endpointPrefix = endpointPrefix;

    /// <summary>The events kept so far.</summary>
    public IReadOnlyList<CallEvent> Events => [.. _events];

    /// <summary>Waits until at least <paramref name="count"/> events were kept.</summary>
    public async Task<IReadOnlyList<CallEvent>> WaitForAsync(int count, TimeSpan timeout)
    {
        TaskCompletionSource reached = new(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_lock)
        {
            _expected = count;
            _reached = reached;
            if (_events.Count >= count)
            {
                reached.TrySetResult();
            }
        }
        try
        {
            await reached.Task.WaitAsync(timeout);
        }
        catch (TimeoutException)
        {
            throw new TimeoutException($"{_events.Count} of {count} call events after {timeout}:\n{string.Join('\n', Events)}");
        }
        return Events;
    }

    /// <inheritdoc />
    protected override void OnEventSourceCreated(EventSource eventSource)
    {
        if (eventSource.Name == "XCall")
        {
            EnableEvents(eventSource, EventLevel.Informational, XCallEventSource.Keywords.Calls);
        }
    }

    /// <inheritdoc />
    protected override void OnEventWritten(EventWrittenEventArgs eventData)
    {
        if (eventData.EventSource.Name != "XCall" || eventData.EventId != XCallEventSource.CallCompletedId || _endpointPrefix is null)
        {
            return;
        }
        CallEvent call = CallEvent.From(eventData);
        if (!call.Endpoint.StartsWith(_endpointPrefix, StringComparison.Ordinal))
        {
            return;
        }
        _events.Enqueue(call);
        lock (_lock)
        {
            if (_events.Count >= _expected)
            {
                _reached?.TrySetResult();
            }
        }
    }
}
