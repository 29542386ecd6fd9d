using System.Runtime.CompilerServices;

namespace XCall.Marshal;

/// <summary>
/// The graph state of one message being written, beyond its first object (which the
/// <see cref="MarshalWriter"/> keeps in its own fields, so a call with one data object never needs this):
/// the id of every other object written so far, and the objects whose bodies are still to be written.
/// One instance per thread is pooled: a writer rents it on its second object and returns it in
/// <see cref="MarshalWriter.Flush"/>; a writer abandoned by an exception leaves it to the GC.
/// </summary>
/// <remarks>
/// An identity map by open addressing: <c>_buckets</c> (linear probing on
/// <see cref="RuntimeHelpers.GetHashCode(object)"/>) points into <c>_entries</c>, which holds the objects
/// in the order their tags were written. That order is also the breadth-first order of the bodies, so the
/// entries double as the queue: a cursor walks them and writes the bodies still pending.
/// </remarks>
internal sealed class GraphWriteState : IValueGraph
{
    /// <summary>Returned by <see cref="Find"/> for an object never written in this message.</summary>
    public const int NotFound = -1;

    /// <summary>Returned by <see cref="Find"/> for an immutable object whose body is being written.</summary>
    public const int Building = -2;

    private const int InitialCapacity = 16;
    private const int MaxPooledObjects = 4096;

    [ThreadStatic]
    private static GraphWriteState? t_cached;

    private Entry[] _entries = new Entry[InitialCapacity];
    private int[] _buckets = new int[InitialCapacity * 2]; // entry index + 1, 0 for a free bucket; never more than half full
    private int _count;
    private int _next; // the first entry whose body may still be pending
    private int _freeBucket; // where the object of the last missed Find goes
    private ValueCycles _valueCycles;

    public static GraphWriteState Rent()
    {
        GraphWriteState? state = t_cached;
        if (state is null)
        {
            return new GraphWriteState();
        }
        t_cached = null; // a writer nested in this one (user code inside a marshaller) gets its own
        return state;
    }

    public static void Return(GraphWriteState state)
    {
        if (state._count > MaxPooledObjects)
        {
            state._entries = new Entry[InitialCapacity];
            state._buckets = new int[InitialCapacity * 2];
        }
        else if (state._count > 0)
        {
            Array.Clear(state._entries, 0, state._count); // drops the references to this message's objects
            Array.Clear(state._buckets);
        }
        state._count = 0;
        state._next = 0;
        state._valueCycles.Clear();
        t_cached = state;
    }

    /// <summary>
    /// The id of <paramref name="value"/>, <see cref="Building"/>, or <see cref="NotFound"/> for an object
    /// not written yet: then <see cref="Add"/> records it (one hash lookup per object). Nothing may touch
    /// this state between a miss and that <see cref="Add"/>. On a hit, <see cref="FoundPosition"/> is the
    /// object's position in the message's graph.
    /// </summary>
    public int Find(object value)
    {
        int[] buckets = _buckets;
        int mask = buckets.Length - 1;
        int bucket = RuntimeHelpers.GetHashCode(value) & mask;
        while (true)
        {
            int index = buckets[bucket] - 1;
            if (index < 0)
            {
                _freeBucket = bucket;
                return NotFound;
            }
            ref Entry entry = ref _entries[index];
            if (ReferenceEquals(entry.Value, value))
            {
                FoundPosition = index + 1;
                return entry.Id >= 0 ? entry.Id : Building;
            }
            bucket = (bucket + 1) & mask;
        }
    }

    /// <summary>The position of the object of the last hit of <see cref="Find"/>: 0 is the message's first
    /// object (kept by the writer), the objects here are 1 and up in the order they were added.</summary>
    public int FoundPosition { get; private set; }

    /// <summary>
    /// Records the object of the last missed <see cref="Find"/> with <paramref name="id"/>, marked as under
    /// construction when <paramref name="building"/>; its body is pending when <paramref name="pending"/>
    /// is not null; <paramref name="parent"/> is the position of the object whose members hold it (-1 for
    /// none). Returns its entry, for <see cref="Built"/>; its position is the entry plus one.
    /// </summary>
    public int Add(object value, int id, bool building, GraphType? pending, bool comparesByValue, int parent)
    {
        if (_count == _entries.Length)
        {
            Grow();
            _freeBucket = FreeBucket(RuntimeHelpers.GetHashCode(value));
        }
        int index = _count++;
        _entries[index] = new Entry(value, pending, building ? ~id : id, comparesByValue, parent);
        _buckets[_freeBucket] = index + 1;
        return index;
    }

    /// <summary>The body of the immutable object of entry <paramref name="index"/> is written: later occurrences are plain back-references.</summary>
    public void Built(int index)
    {
        ref int id = ref _entries[index].Id;
        id = ~id;
    }

    /// <summary>The next object whose body is pending, in the order the objects were written; false when there is none.</summary>
    public bool TryDequeue(out object value, out GraphType type, out int position)
    {
        while (_next < _count)
        {
            ref Entry entry = ref _entries[_next++];
            if (entry.Pending is not null)
            {
                value = entry.Value;
                type = entry.Pending;
                position = _next; // positions start at 1 in this table
                return true;
            }
        }
        value = null!;
        type = null!;
        position = 0;
        return false;
    }

    /// <summary>Whether the object at position <paramref name="position"/> (1 and up) compares by value.</summary>
    public bool ComparesByValueAt(int position) => _entries[position - 1].ComparesByValue;

    /// <summary>Records a reference from the object at <paramref name="from"/> back to the earlier one at
    /// <paramref name="to"/>, both comparing by value.</summary>
    public void AddValueEdge(int from, int to) => _valueCycles.AddBackEdge(from, to);

    /// <summary>The position of an object on a cycle through objects that compare by value among those
    /// written so far (<see cref="ValueCycles"/>), or -1.</summary>
    public int FindValueCycle(bool firstComparesByValue) => _valueCycles.Find(this, _count + 1, firstComparesByValue);

    /// <summary>The object at position <paramref name="position"/> (1 and up).</summary>
    public object Get(int position) => _entries[position - 1].Value;

    bool IValueGraph.ComparesByValue(int id) => _entries[id - 1].ComparesByValue;

    int IValueGraph.Parent(int id) => _entries[id - 1].Parent;

    private int FreeBucket(int hash)
    {
        int mask = _buckets.Length - 1;
        int bucket = hash & mask;
        while (_buckets[bucket] != 0)
        {
            bucket = (bucket + 1) & mask;
        }
        return bucket;
    }

    private void Grow()
    {
        Array.Resize(ref _entries, _entries.Length * 2);
        _buckets = new int[_entries.Length * 2];
        for (int i = 0; i < _count; i++)
        {
            _buckets[FreeBucket(RuntimeHelpers.GetHashCode(_entries[i].Value))] = i + 1;
        }
    }

    private struct Entry(object value, GraphType? pending, int id, bool comparesByValue, int parent)
    {
        public readonly object Value = value;
        public readonly GraphType? Pending = pending; // the type whose WriteBody is still to run, else null
        public int Id = id; // ~id while an immutable object's body is being written
        public readonly bool ComparesByValue = comparesByValue;
        public readonly int Parent = parent; // position of the object whose members hold this one, -1 for none
    }
}
