using System.Collections.Concurrent;

namespace XCall.Hosting;

/// <summary>
/// The clients registered with <see cref="XCallServiceCollectionExtensions.AddXCallClient{T}"/> and the state of
/// each one's link, for <see cref="XCallHealthCheck"/>: one instance per service collection.
/// </summary>
internal sealed class XCallClientStates
{
    private readonly ConcurrentDictionary<string, Client> _clients = new(StringComparer.Ordinal);

    /// <summary>The registered clients, by contract name, in no order.</summary>
    public IEnumerable<KeyValuePair<string, Client>> Clients => _clients;

    /// <summary>A client of <paramref name="contract"/> is registered; it connects on first use.</summary>
    public void Declare(string contract) => _clients.TryAdd(contract, new Client());

    /// <summary>The client of <paramref name="contract"/> connected; <paramref name="state"/> reads its link's state from now on.</summary>
    public void Opened(string contract, string address, string transport, Func<ConnectionState> state) =>
        _clients[contract] = new Client { Address = address, Transport = transport, State = state };

    /// <summary>The client of <paramref name="contract"/> could not connect to <paramref name="address"/>.</summary>
    public void Failed(string contract, string address, Exception error) =>
        _clients[contract] = new Client { Address = address, Error = error };

    /// <summary>What is known of one client: nothing before its first use, then its link or why it has none.</summary>
    internal sealed record Client
    {
        public string? Address { get; init; }

        public string? Transport { get; init; }

        public Func<ConnectionState>? State { get; init; }

        public Exception? Error { get; init; }
    }
}
