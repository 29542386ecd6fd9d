namespace XCall.Runtime;

/// <summary>
/// Carries [Remotable] objects through a copy that has no connection (the domain transport copies data
/// through a thread-local buffer, written and read back on the same thread): the writer parks the object
/// here and writes its index, the reader takes it back. The object itself passes; see docs/remoting.md.
/// </summary>
internal static class ReferencePassThrough
{
    [ThreadStatic]
    private static List<object?>? t_objects;

    public static int Add(object value)
    {
        List<object?> list = t_objects ??= [];
        list.Add(value);
        return list.Count - 1;
    }

    public static object? Take(int index)
    {
        List<object?>? list = t_objects;
        if (list is null || (uint)index >= (uint)list.Count || list[index] is not { } value)
        {
            throw new XCallProtocolException($"No passed object with index {index}.");
        }
        list[index] = null;
        if (list.TrueForAll(static o => o is null))
        {
            list.Clear();
        }
        return value;
    }
}
