namespace XCall.Channels.Distributed;

/// <summary>The named constructs this process hosts, by id, served to the other processes as <see cref="IConstructHost"/>.</summary>
internal sealed class ConstructHost : IConstructHost
{
    // Design: _entries only grows, under _lock, by publishing a new array that holds every earlier entry; readers take
    // the array without the lock. An id is handed out (and so can arrive from a peer) only after Add published its entry.
    private readonly Lock _lock = new();
    private object[] _entries = new object[16];
    private int _count;

    /// <summary>Hosts <paramref name="construct"/> (a <see cref="HostedChannel"/>, <see cref="Barrier"/> or <see cref="Bucket"/>) and returns its id.</summary>
    public int Add(object construct)
    {
        lock (_lock)
        {
            if (_count == _entries.Length)
            {
                object[] grown = new object[_entries.Length * 2];
                _entries.CopyTo(grown, 0);
                Volatile.Write(ref _entries, grown);
            }
            _entries[_count] = construct;
            return _count++;
        }
    }

    public ValueTask<int> WriteWordAsync(int id, long word, CancellationToken cancellationToken) => Get<HostedChannel>(id).WriteWordAsync(word, cancellationToken);

    public ValueTask<int> WriteBytesAsync(int id, byte[] value, CancellationToken cancellationToken) => Get<HostedChannel>(id).WriteBytesAsync(value, cancellationToken);

    public ValueTask<WordRead> ReadWordAsync(int id, bool extended, CancellationToken cancellationToken) => Get<HostedChannel>(id).ReadWordAsync(extended, cancellationToken);

    public ValueTask<BytesRead> ReadBytesAsync(int id, bool extended, CancellationToken cancellationToken) => Get<HostedChannel>(id).ReadBytesAsync(extended, cancellationToken);

    public void EndRead(int id) => Get<HostedChannel>(id).EndRead();

    public void Poison(int id, int strength) => Get<HostedChannel>(id).Poison(strength);

    public void Complete(int id) => Get<HostedChannel>(id).Complete();

    public ValueTask<WriterGrant> OpenWriterAsync(int id) => new(Get<HostedChannel>(id).OpenWriter());

    public void WriteBatch(int id, int writer, long sequence, int returned, ReadOnlyMemory<long> words, ReadOnlyMemory<byte> bytes, ReadOnlyMemory<int> lengths) =>
        Get<HostedChannel>(id).WriteBatch(writer, sequence, returned, words.Span, bytes.Span, lengths.Span);

    public Task<WriterGrant> UrgentCreditsAsync(int id, int writer) => Get<HostedChannel>(id).CreditsAsync(writer, urgent: true);

    public Task<WriterGrant> StandingCreditsAsync(int id, int writer) => Get<HostedChannel>(id).CreditsAsync(writer, urgent: false);

    public Task AppliedAsync(int id, int writer, long batches) => Get<HostedChannel>(id).AppliedAsync(writer, batches);

    public void EndAfter(int id, int writer, long batches, int strength) => Get<HostedChannel>(id).EndAfter(writer, batches, strength);

    public Task SyncAsync(int id) => Get<Barrier>(id).SyncAsync();

    public void Enroll(int id) => Get<Barrier>(id).Enroll();

    public void Resign(int id) => Get<Barrier>(id).Resign();

    public Task FallIntoAsync(int id) => Get<Bucket>(id).FallIntoAsync();

    public int Flush(int id) => Get<Bucket>(id).Flush();

    public int Holding(int id) => Get<Bucket>(id).Holding;

    private T Get<T>(int id) where T : class
    {
        object[] entries = Volatile.Read(ref _entries);
        return (uint)id < (uint)entries.Length && entries[id] is T construct
            ? construct
            : throw new ArgumentException($"This process hosts no {typeof(T).Name} with id {id}.", nameof(id));
    }
}
