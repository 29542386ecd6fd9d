using XCall.Runtime;

namespace XCall.Parallel;

/// <summary>
/// The contracts of a parallel world and a factory for each: every rank joins with the same set, so any rank can
/// create an object of any of them when the placement picks it.
/// </summary>
public sealed class ParallelTypes
{
    private readonly Dictionary<string, ParallelType> _byContract = new(StringComparer.Ordinal);
    private readonly Dictionary<Type, ParallelType> _byInterface = [];

    /// <summary>
    /// Adds contract <typeparamref name="T"/> (a <see cref="RemotableAttribute"/> interface) with the factory of its objects.
    /// <paramref name="agglomeration"/> says whether new objects may be created in the caller's process instead of
    /// where the placement puts them (<see cref="Agglomeration.Adaptive"/>: when the measured grain is too fine).
    /// </summary>
    /// <exception cref="InvalidOperationException">The contract was added already.</exception>
    public ParallelTypes Add<T>(Func<T> factory, Agglomeration agglomeration = Agglomeration.Adaptive) where T : class
    {
        ArgumentNullException.ThrowIfNull(factory);
        Contract<T> contract = ContractRegistry.Get<T>();
        var type = new ParallelType(typeof(T), contract.Name, contract.Hash, contract.Dispatcher, factory, agglomeration);
        if (!_byContract.TryAdd(contract.Name, type))
        {
            throw new InvalidOperationException($"The parallel type {contract.Name} was added already.");
        }
        _byInterface[typeof(T)] = type;
        return this;
    }

    internal ParallelType? Find(string contract) => _byContract.GetValueOrDefault(contract);

    internal ParallelType Get<T>() => _byInterface.GetValueOrDefault(typeof(T))
        ?? throw new InvalidOperationException($"{typeof(T)} is not a type of this parallel world: add it to its ParallelTypes.");

    internal ParallelType? FindByTarget(object target)
    {
        foreach (ParallelType type in _byInterface.Values)
        {
            if (type.Interface.IsInstanceOfType(target))
            {
                return type;
            }
        }
        return null;
    }
}
