namespace XCall.Marshal;

/// <summary>
/// The graph state of one message being read, beyond its first object (which the
/// <see cref="MarshalReader"/> keeps in its own fields): every other object read so far by id
/// (back-references name them), the mutable objects whose bodies are still to be read, and the work that
/// has to wait until every object is filled (adding keys to hash sets and dictionaries). Pooled per
/// thread like <see cref="GraphWriteState"/>; returned in <see cref="MarshalReader.EnsureFullyConsumed"/>.
/// </summary>
internal sealed class GraphReadState
{
    private const int InitialCapacity = 16;
    private const int MaxPooledObjects = 4096;

    /// <summary>Stands in the table for an immutable object whose members are being read.</summary>
    public static readonly object BuildingMarker = new();

    [ThreadStatic]
    private static GraphReadState? t_cached;

    private object?[] _objects = new object?[InitialCapacity]; // ids 1, 2, ... (id 0 is the reader's first object)
    private int _count;
    private List<Action>? _deferred;

    public readonly GraphQueue Queue = new();

    public bool HasDeferred => _deferred is { Count: > 0 };

    public static GraphReadState Rent()
    {
        GraphReadState? state = t_cached;
        if (state is null)
        {
            return new GraphReadState();
        }
        t_cached = null;
        return state;
    }

    public static void Return(GraphReadState state)
    {
        if (state._objects.Length > MaxPooledObjects)
        {
            state._objects = new object?[InitialCapacity];
        }
        else
        {
            Array.Clear(state._objects, 0, state._count);
        }
        state._count = 0;
        state._deferred?.Clear();
        state.Queue.Reset();
        t_cached = state;
    }

    /// <summary>Registers the object with the next id.</summary>
    public void Append(object value)
    {
        if (_count == _objects.Length)
        {
            Array.Resize(ref _objects, _objects.Length * 2);
        }
        _objects[_count++] = value;
    }

    /// <summary>Replaces the object at <paramref name="index"/> (an immutable object, once built).</summary>
    public void Replace(int index, object value) => _objects[index] = value;

    /// <summary>The object at <paramref name="index"/>; the caller checked it against the count of ids read.</summary>
    public object Get(int index) => _objects[index]!;

    public void Defer(Action action) => (_deferred ??= []).Add(action);

    /// <summary>Runs the deferred work in the order it was queued.</summary>
    public void RunDeferred()
    {
        List<Action> deferred = _deferred!;
        for (int i = 0; i < deferred.Count; i++)
        {
            deferred[i]();
        }
        deferred.Clear();
    }
}
