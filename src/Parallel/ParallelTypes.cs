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

    /// <summary>
    /// Gives contract <typeparamref name="T"/> (added already) a grain probe for <see cref="Agglomeration.Adaptive"/>:
    /// before any call of the contract was measured on another rank, the object manager decides a creation by timing
    /// the call that <paramref name="grainProbe"/> returns, run directly and repeatedly on an object of the contract's
    /// factory that <paramref name="grainProbe"/> set up (that object is then dropped: never placed nor called
    /// otherwise). Return a call as long as the calls the objects will get, touching nothing outside its object: objects
    /// are created where that grain says (<see cref="ParallelWorldOptions.GrainFactor"/>) until the calls measured on
    /// other ranks (<see cref="ParallelWorldOptions.MinMeasuredCalls"/>) decide instead. The probe runs once per world,
    /// at the first creation that asks, in that creation's thread.
    /// </summary>
    /// <exception cref="InvalidOperationException"><typeparamref name="T"/> was not added.</exception>
    public ParallelTypes SetGrainProbe<T>(Func<T, Action> grainProbe) where T : class
    {
        ArgumentNullException.ThrowIfNull(grainProbe);
        ParallelType type = Get<T>() with { Probe = target => grainProbe((T)target) };
        _byContract[type.Contract] = type;
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
