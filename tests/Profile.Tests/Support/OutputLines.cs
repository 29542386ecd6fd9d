namespace XCall.Profile.Tests.Support;

/// <summary>The lines a child process wrote to one stream, with waits for a line to appear.</summary>
internal sealed class OutputLines
{
    private readonly object _lock = new();
    private readonly List<string> _lines = [];
    private readonly List<(Func<string, bool> Match, TaskCompletionSource<string> Found)> _waiters = [];
    private bool _ended;

    /// <summary>Everything written so far.</summary>
    public string Text
    {
        get
        {
            lock (_lock)
            {
                return string.Join('\n', _lines);
            }
        }
    }

    /// <summary>Adds a line (null: the stream ended).</summary>
    public void Add(string? line)
    {
        lock (_lock)
        {
            if (line is null)
            {
                _ended = true;
                foreach ((_, TaskCompletionSource<string> found) in _waiters)
                {
                    found.TrySetException(new EndOfStreamException("the stream ended"));
                }
                _waiters.Clear();
                return;
            }
            _lines.Add(line);
            for (int i = _waiters.Count - 1; i >= 0; i--)
            {
                if (_waiters[i].Match(line))
                {
                    _waiters[i].Found.TrySetResult(line);
                    _waiters.RemoveAt(i);
                }
            }
        }
    }

    /// <summary>Waits for a line (already written or to come) that <paramref name="match"/> accepts.</summary>
    /// <exception cref="TimeoutException">None came in time, or the stream ended; the message holds the output.</exception>
    public async Task<string> WaitForAsync(Func<string, bool> match, TimeSpan timeout, string what)
    {
        var found = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_lock)
        {
            string? line = _lines.FirstOrDefault(match);
            if (line is not null)
            {
                return line;
            }
            if (_ended)
            {
                throw new TimeoutException($"no {what}: the stream ended. Output:\n{string.Join('\n', _lines)}");
            }
            _waiters.Add((match, found));
        }
        try
        {
            return await found.Task.WaitAsync(timeout);
        }
        catch (Exception ex) when (ex is TimeoutException or EndOfStreamException)
        {
            throw new TimeoutException($"no {what} ({ex.Message}). Output:\n{Text}");
        }
    }
}
