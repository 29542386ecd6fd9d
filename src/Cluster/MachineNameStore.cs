using System.Globalization;

namespace XCall.Cluster;

/// <summary>
/// Names of this machine, for processes started without a launcher: one file per name in the per-user runtime
/// directory (mode 0700), no daemon. A name belongs to the process that registered it and goes when it ends.
/// </summary>
internal sealed class MachineNameStore : INameStore, IDisposable
{
    // Design: a name is the file n-<escaped name>, holding "<pid> <start time>\n<value>". It is created whole or not
    // at all: written to a temporary file, then linked to its name with File.Move without overwrite (link(2), which
    // fails when the name exists), so a reader never sees a partial file and two registrations cannot both win.
    // A file whose owner (pid and start time, so a reused pid does not count) no longer runs is stale: readers
    // treat it as absent and a registration removes it. _lock guards _owned, the files this process created,
    // which Dispose removes.
    private const string FilePrefix = "n-";
    private readonly object _lock = new();
    private readonly string _directory;
    private readonly List<string> _owned = [];
    private readonly string _owner = $"{Environment.ProcessId} {StartTime(Environment.ProcessId)}";

    public MachineNameStore(string runtimeDirectory)
    {
        _directory = Path.Combine(runtimeDirectory, "names");
        foreach (string directory in new[] { runtimeDirectory, _directory })
        {
            if (OperatingSystem.IsWindows())
            {
                Directory.CreateDirectory(directory);
            }
            else
            {
                Directory.CreateDirectory(directory, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
            }
        }
    }

    public Task<string> AddAsync(string name, string value, CancellationToken cancellationToken)
    {
        string path = PathOf(name);
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            string temporary = Path.Combine(_directory, $"tmp-{Environment.ProcessId}-{Guid.NewGuid():N}");
            File.WriteAllText(temporary, _owner + "\n" + value);
            try
            {
                File.Move(temporary, path, overwrite: false);
                lock (_lock)
                {
                    _owned.Add(path);
                }
                return Task.FromResult(value);
            }
            catch (IOException) when (File.Exists(path))
            {
                File.Delete(temporary);
            }
            if (Read(path) is { } held)
            {
                return Task.FromResult(held);
            }
            TryDelete(path); // stale: its owner is gone
        }
    }

    public Task<string?> GetAsync(string name, CancellationToken cancellationToken) => Task.FromResult(Read(PathOf(name)));

    public async Task<string> WaitAsync(string name, CancellationToken cancellationToken)
    {
        string path = PathOf(name);
        var appeared = new SemaphoreSlim(0);
        using var watcher = new FileSystemWatcher(_directory, Path.GetFileName(path));
        watcher.Created += (_, _) => appeared.Release();
        watcher.Renamed += (_, _) => appeared.Release();
        watcher.EnableRaisingEvents = true; // before the first look, so a name registered in between is not missed
        while (true)
        {
            if (Read(path) is { } value)
            {
                return value;
            }
            await appeared.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>The names that start with <paramref name="prefix"/> and their values, leaving out those whose owner no longer runs.</summary>
    public IEnumerable<(string Name, string Value)> List(string prefix)
    {
        string start = FilePrefix + Uri.EscapeDataString(prefix);
        foreach (string path in Directory.EnumerateFiles(_directory, start + "*"))
        {
            string file = Path.GetFileName(path);
            // The pattern is a glob, so check the prefix exactly (escaped names hold no glob characters but '%').
            if (file.StartsWith(start, StringComparison.Ordinal) && Read(path) is { } value)
            {
                yield return (Uri.UnescapeDataString(file[FilePrefix.Length..]), value);
            }
        }
    }

    /// <summary>Removes the names this process registered.</summary>
    public void Dispose()
    {
        string[] owned;
        lock (_lock)
        {
            owned = [.. _owned];
            _owned.Clear();
        }
        foreach (string path in owned)
        {
            if (File.Exists(path) && File.ReadAllText(path).StartsWith(_owner + "\n", StringComparison.Ordinal))
            {
                TryDelete(path);
            }
        }
    }

    private string PathOf(string name) => Path.Combine(_directory, FilePrefix + Uri.EscapeDataString(name));

    /// <summary>The value in <paramref name="path"/>, or null when there is none or its owner no longer runs.</summary>
    private static string? Read(string path)
    {
        string text;
        try
        {
            text = File.ReadAllText(path);
        }
        catch (Exception e) when (e is FileNotFoundException or DirectoryNotFoundException)
        {
            return null;
        }
        int newline = text.IndexOf('\n', StringComparison.Ordinal);
        string[] owner = newline < 0 ? [] : text[..newline].Split(' ');
        if (owner.Length != 2 || !int.TryParse(owner[0], NumberStyles.None, CultureInfo.InvariantCulture, out int pid)
            || StartTime(pid) != owner[1])
        {
            return null;
        }
        return text[(newline + 1)..];
    }

    /// <summary>The start time of process <paramref name="pid"/> (field 22 of /proc/pid/stat), or empty when it does not run.</summary>
    private static string StartTime(int pid)
    {
        try
        {
            string stat = File.ReadAllText($"/proc/{pid}/stat");
            return stat[(stat.LastIndexOf(')') + 2)..].Split(' ')[19];
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or IndexOutOfRangeException)
        {
            return "";
        }
    }

    private static void TryDelete(string path)
    {
        try
        {
            File.Delete(path);
        }
        catch (IOException)
        {
            // Another process removed or replaced it first.
        }
    }
}
