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

    /// <summary>Adds <paramref name="service"/> as the implementation of contract <typeparamref name="T"/> (a well-known singleton: every client calls this one object).</summary>
    /// <exception cref="InvalidOperationException">A service of that contract is already registered.</exception>
    public void Add<T>(T service) where T : class
    {
        ArgumentNullException.ThrowIfNull(service);
        Contract<T> contract = ContractRegistry.Get<T>();
        AddEntry(contract.Name, service, contract.Dispatcher, contract.Hash);
    }

    /// <summary>
    /// Adds per-call activation for contract <typeparamref name="T"/>: every call gets a new instance from
    /// <paramref name="factory"/>, disposed (when <see cref="IDisposable"/>) after the call ends.
    /// </summary>
    /// <exception cref="InvalidOperationException">A service of that contract is already registered.</exception>
    public void AddPerCall<T>(Func<T> factory) where T : class
    {
        ArgumentNullException.ThrowIfNull(factory);
        Contract<T> contract = ContractRegistry.Get<T>();
        AddEntry(contract.Name, factory, new PerCallDispatcher<T>(factory, contract.Dispatcher), contract.Hash);
    }

    private void AddEntry(string name, object target, Dispatcher dispatcher, ulong hash)
    {
        lock (_lock)
        {
            if (_byName.ContainsKey(name))
            {
                throw new InvalidOperationException($"A service for {name} is already registered.");
            }
            _byName.Add(name, new Entry((ulong)_byName.Count + 1, target, dispatcher, hash));
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
