using System.Runtime.InteropServices;

namespace XCall.Marshal;

/// <summary>
/// The graph state of one message being written, beyond its first object (which the
/// <see cref="MarshalWriter"/> keeps in its own fields, so a call with one data object never needs this):
/// the id of every other object written so far, and the objects whose bodies are still to be written.
/// One instance per thread is pooled: a writer rents it on its second object and returns it in
/// <see cref="MarshalWriter.Flush"/>; a writer abandoned by an exception leaves it to the GC.
/// </summary>
internal sealed class GraphWriteState
{
    /// <summary>Returned by <see cref="Find"/> for an object never written in this message.</summary>
    public const int NotFound = -1;

    /// <summary>Returned by <see cref="Find"/> for an immutable object whose body is being written.</summary>
    public const int Building = -2;

    private const int MaxPooledObjects = 4096;

    [ThreadStatic]
    private static GraphWriteState? t_cached;

    private Dictionary<object, int>? _ids; // id, or ~id while an immutable object's body is being written

    public readonly GraphQueue Queue = new();

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
        if (state._ids is { Count: > MaxPooledObjects })
        {
            state._ids = null; // Clear would keep the big bucket array
        }
        else
        {
            state._ids?.Clear();
        }
        state.Queue.Reset();
        t_cached = state;
    }

    /// <summary>
    /// The id of <paramref name="value"/>, or <see cref="Building"/>; for an object not written yet,
    /// <see cref="NotFound"/>, and <paramref name="slot"/> is where its id goes (one hash lookup per object).
    /// Nothing may touch this state between a miss and the store through <paramref name="slot"/>.
    /// </summary>
    public int Find(object value, out Slot slot)
    {
        ref int id = ref CollectionsMarshal.GetValueRefOrAddDefault(_ids ??= new Dictionary<object, int>(ReferenceEqualityComparer.Instance), value, out bool exists);
        if (exists)
        {
            slot = default;
            return id >= 0 ? id : Building;
        }
        slot = new Slot(ref id);
        return NotFound;
    }

    /// <summary>The body of immutable <paramref name="value"/> (id <paramref name="id"/>) is written: later occurrences are plain back-references.</summary>
    public void Built(object value, int id) => _ids![value] = id;

    /// <summary>Where a new object's id goes: its entry in the dictionary.</summary>
    public readonly ref struct Slot
    {
        private readonly ref int _id;

        public Slot(ref int id) => _id = ref id;

        /// <summary>Records <paramref name="id"/>, marked as under construction when <paramref name="building"/>.</summary>
        public void Set(int id, bool building) => _id = building ? ~id : id;
    }
}
