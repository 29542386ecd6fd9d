using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;

namespace XCall.Hosting.Tests;

/// <summary>A test logger: every entry of every category, and a way to await an event id.</summary>
public sealed class RecordingLoggerProvider : ILoggerProvider
{
    private readonly ConcurrentQueue<(string Category, EventId Id, string Message)> _entries = new();
    private readonly ConcurrentDictionary<int, TaskCompletionSource> _waits = new();

    public IReadOnlyCollection<(string Category, EventId Id, string Message)> Entries => _entries;

    /// <summary>Completes when an entry with <paramref name="eventId"/> has been logged (at once if one was).</summary>
    public Task Logged(int eventId) =>
        _waits.GetOrAdd(eventId, _ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).Task;

    public ILogger CreateLogger(string categoryName) => new Logger(this, categoryName);

    public void Dispose()
    {
    }

    private void Add(string category, EventId id, string message)
    {
        _entries.Enqueue((category, id, message));
        _waits.GetOrAdd(id.Id, _ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).TrySetResult();
    }

    private sealed class Logger(RecordingLoggerProvider owner, string category) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
            owner.Add(category, eventId, formatter(state, exception));
    }
}
