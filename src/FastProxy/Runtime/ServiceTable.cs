using System.ComponentModel;

namespace XCall.Runtime;

/// <summary>
/// The services a server offers, by contract name. A client asks for one with a Hello frame; the
/// server checks the contract hash and exposes the service on that connection under the service's id.
/// </summary>
public sealed class ServiceTable
{
    private readonly object _lock = new();
    private readonly Dictionary<string, Entry> _byName = new(StringComparer.Ordinal);

    /// <summary>Adds <paramref name="service"/> as the implementation of contract <typeparamref name="T"/>.</summary>
    /// <exception cref="InvalidOperationException">A service of that contract is already registered.</exception>
    public void Add<T>(T service) where T : class
    {
        ArgumentNullException.ThrowIfNull(service);
        Contract<T> contract = ContractRegistry.Get<T>();
        lock (_lock)
        {
            if (_byName.ContainsKey(contract.Name))
            {
                throw new InvalidOperationException($"A service for {contract.Name} is already registered.");
            }
            _byName.Add(contract.Name, new Entry((ulong)_byName.Count + 1, service, contract.Dispatcher, contract.Hash));
        }
    }

    [EditorBrowsable(EditorBrowsableState.Never)]
    internal bool TryGet(string contractName, out Entry entry)
    {
        lock (_lock)
        {
            return _byName.TryGetValue(contractName, out entry!);
        }
    }

    internal sealed record Entry(ulong ObjectId, object Target, Dispatcher Dispatcher, ulong Hash);
}
