using System.Diagnostics.Tracing;
using System.Globalization;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;
using XCall.Profile.Processes;

namespace XCall.Profile.Tracing;

/// <summary>
/// An EventPipe session on one process with XCall's <c>Calls</c> keyword enabled. Events are read on a
/// thread of their own and handed to the callback in the order they arrive; the session ends when
/// <see cref="Stop"/> is called or the process exits (the stream ends), which completes <see cref="Completion"/>.
/// </summary>
internal sealed class XCallTraceSession : IDisposable
{
    // The runtime's buffer for the session; XCall events are about 200 bytes, so this holds a few
    // hundred thousand of them while the reader catches up.
    private const int BufferMegabytes = 64;

    // The runtime's counters provider: present in every .NET process, it writes a few events per interval.
    private const string HeartbeatProvider = "System.Runtime";

    private readonly EventPipeSession _session;
    private readonly CallEventParser _parser = new();
    private readonly Action<CallRecord> _onCall;
    private int _stopRequested;

    private XCallTraceSession(int processId, EventPipeSession session, Action<CallRecord> onCall)
    {
        ProcessId = processId;
        _session = session;
        _onCall = onCall;
        Completion = Task.Factory.StartNew(Read, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
    }

    /// <summary>The traced process.</summary>
    public int ProcessId { get; }

    /// <summary>Completes when no more events will come: after <see cref="Stop"/>, or when the process exited.</summary>
    public Task Completion { get; }

    /// <summary>Why reading stopped before <see cref="Stop"/> while the process still ran; null otherwise.</summary>
    public Exception? Error { get; private set; }

    /// <summary>XCall events that could not be read (a different event layout).</summary>
    public long UnreadableEvents => _parser.Unreadable;

    /// <summary>True when the stream ended because the process exited, not because of <see cref="Stop"/>.</summary>
    public bool ProcessExited { get; private set; }

    /// <summary>Starts a session on <paramref name="processId"/>; <paramref name="onCall"/> gets each call event.</summary>
    /// <param name="processId">The process to trace.</param>
    /// <param name="onCall">Called on the reading thread for each call event.</param>
    /// <param name="heartbeat">
    /// For live views: also has the process write its runtime counters at this interval. The reader
    /// sorts events across threads and holds back those newer than the newest event it knows to be the
    /// oldest of a flush (dotnet/runtime#76704), so the last calls of a burst would wait for the next
    /// event of any kind; a steady event keeps that wait under one interval. Null for none.
    /// </param>
    /// <exception cref="ProfileException">The process refused or dropped the session.</exception>
    public static XCallTraceSession Start(int processId, Action<CallRecord> onCall, TimeSpan? heartbeat = null)
    {
        var client = new DiagnosticsClient(processId);
        var providers = new List<EventPipeProvider>
        {
            new(CallEventParser.ProviderName, EventLevel.Informational, CallEventParser.CallsKeyword),
        };
        if (heartbeat is { } interval)
        {
            string seconds = Math.Max(interval.TotalSeconds, 0.1).ToString("0.###", CultureInfo.InvariantCulture);
            providers.Add(new EventPipeProvider(
                HeartbeatProvider,
                EventLevel.Informational,
                keywords: 0,
                arguments: new Dictionary<string, string> { ["EventCounterIntervalSec"] = seconds }));
        }
        try
        {
            EventPipeSession session = client.StartEventPipeSession(providers, requestRundown: false, BufferMegabytes);
            return new XCallTraceSession(processId, session, onCall);
        }
        catch (ServerNotAvailableException ex)
        {
            throw new ProfileException(ExitCodes.NotDotNet, $"process {processId} is not a .NET process (no diagnostic endpoint): {ex.Message}", ex);
        }
        catch (Exception ex) when (ex is DiagnosticsClientException or IOException or UnauthorizedAccessException or TimeoutException)
        {
            throw new ProfileException(ExitCodes.SessionFailed, $"could not start an EventPipe session in process {processId}: {ex.Message}", ex);
        }
    }

    /// <summary>Ends the session and waits until every event the process had written was handed over.</summary>
    public void Stop()
    {
        if (Interlocked.Exchange(ref _stopRequested, 1) != 0)
        {
            return;
        }
        if (!Completion.IsCompleted)
        {
            try
            {
                // The runtime flushes its buffers, then closes the stream: Read sees the end.
                _session.Stop();
            }
            catch (Exception ex) when (ex is ServerNotAvailableException or DiagnosticsClientException or IOException or TimeoutException)
            {
                // The process exited meanwhile: its stream ends by itself.
            }
        }
        if (!Completion.Wait(TimeSpan.FromSeconds(10)))
        {
            _session.Dispose(); // Closing the stream ends a read that hangs.
            Completion.Wait(TimeSpan.FromSeconds(5));
        }
    }

    /// <inheritdoc cref="Stop"/>
    public void Dispose()
    {
        Stop();
        _session.Dispose();
    }

    private void Read()
    {
        try
        {
            using var source = new EventPipeEventSource(_session.EventStream);
            source.Dynamic.All += data =>
            {
                if (_parser.TryParse(data, out CallRecord call))
                {
                    _onCall(call);
                }
            };
            source.Process();
            ProcessExited = Volatile.Read(ref _stopRequested) == 0;
        }
        catch (Exception ex)
        {
            // A stream cut by a stop or by the process's exit is the normal end; anything else is reported.
            if (Volatile.Read(ref _stopRequested) == 0)
            {
                if (ProcessCatalog.IsRunning(ProcessId))
                {
                    Error = ex;
                }
                else
                {
                    ProcessExited = true;
                }
            }
        }
    }
}
