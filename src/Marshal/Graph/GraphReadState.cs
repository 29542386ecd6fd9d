namespace XCall.Marshal;

/// <summary>
/// The graph state of one message being read, beyond its first object (which the
/// <see cref="MarshalReader"/> keeps in its own fields): every other object read so far by id
/// (back-references name them), the mutable objects whose bodies are still to be read, and the work that
/// has to wait until every object is filled (adding keys to hash sets and dictionaries). Pooled per
/// thread like <see cref="GraphWriteState"/>; returned in <see cref="MarshalReader.EnsureFullyConsumed"/>.
/// </summary>
/// <remarks>
/// Bodies are read in the order the objects' tags were read, which is also id order: the table of objects
/// doubles as the queue, a cursor walking it to the bodies still pending.
/// </remarks>
internal sealed class GraphReadState : IValueGraph
{
    private const int InitialCapacity = 16;
    private const int MaxPooledObjects = 4096;

    /// <summary>Stands in the table for an immutable object whose members are being read.</summary>
    public static readonly object BuildingMarker = new();

    [ThreadStatic]
    private static GraphReadState? t_cached;

    private Entry[] _entries = new Entry[InitialCapacity]; // ids 1, 2, ... (id 0 is the reader's first object)
    private int _count;
    private int _next; // the first entry whose body may still be pending
    private List<Action>? _deferred;
    private ValueCycles _valueCycles;

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
        if (state._entries.Length > MaxPooledObjects)
        {
            state._entries = new Entry[InitialCapacity];
        }
        else
        {
            Array.Clear(state._entries, 0, state._count);
        }
        state._count = 0;
        state._next = 0;
        state._deferred?.Clear();
        state._valueCycles.Clear();
        t_cached = state;
    }

    /// <summary>
    /// Registers the object with the next id; its body is pending when <paramref name="pending"/> is not null.
    /// <paramref name="parent"/> is the id of the object whose members created it (-1 for none).
    /// </summary>
    public void Append(object value, GraphType? pending, bool comparesByValue, int parent)
    {
        if (_count == _entries.Length)
        {
            Array.Resize(ref _entries, _entries.Length * 2);
        }
        _entries[_count++] = new Entry(value, pending, comparesByValue, parent);
    }

    /// <summary>Whether the object at <paramref name="index"/> compares by value.</summary>
    public bool ComparesByValue(int index) => _entries[index].ComparesByValue;

    /// <summary>Records a reference from object <paramref name="from"/> back to the earlier object <paramref name="to"/>, both comparing by value.</summary>
    public void AddValueEdge(int from, int to) => _valueCycles.AddBackEdge(from, to);

    /// <summary>Refuses a cycle made only of objects that compare by value (<see cref="ValueCycles"/>): their
    /// equality and hash code would recurse around it until the stack overflows, which ends the process.</summary>
    public void CheckValueCycles(bool firstComparesByValue)
    {
        int id = _valueCycles.Find(this, _count + 1, firstComparesByValue);
        if (id >= 0)
        {
            throw new XCallProtocolException(
                $"The payload holds a cycle through objects that compare by value (object {id} and the objects it leads to, " +
                $"records or types that override Equals/GetHashCode): comparing, hashing or printing them would never end.");
        }
    }

    bool IValueGraph.ComparesByValue(int id) => _entries[id - 1].ComparesByValue;

    int IValueGraph.Parent(int id) => _entries[id - 1].Parent;

    /// <summary>Replaces the object at <paramref name="index"/> (an immutable object, once built).</summary>
    public void Replace(int index, object value) => _entries[index].Value = value;

    /// <summary>The object at <paramref name="index"/>; the caller checked it against the count of ids read.</summary>
    public object Get(int index) => _entries[index].Value;

    /// <summary>The next object whose body is pending, in id order, and its id; false when there is none.</summary>
    public bool TryDequeue(out object value, out GraphType type, out int id)
    {
        while (_next < _count)
        {
            ref Entry entry = ref _entries[_next++];
            if (entry.Pending is not null)
            {
                value = entry.Value;
                type = entry.Pending;
                id = _next; // ids start at 1 in this table
                return true;
            }
        }
        value = null!;
        type = null!;
        id = 0;
        return false;
    }

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

    private struct Entry(object value, GraphType? pending, bool comparesByValue, int parent)
    {
        public object Value = value;
        public readonly GraphType? Pending = pending; // the type whose ReadBody is still to run, else null
        public readonly bool ComparesByValue = comparesByValue;
        public readonly int Parent = parent; // id of the object whose members created this one, -1 for none
    }
}
