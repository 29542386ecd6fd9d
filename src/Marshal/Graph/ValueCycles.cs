namespace XCall.Marshal;

/// <summary>The objects of one message's graph as <see cref="ValueCycles"/> sees them: ids 1 and up (id 0, the
/// message's first object, is passed on its own).</summary>
internal interface IValueGraph
{
    /// <summary>Whether object <paramref name="id"/> compares by value.</summary>
    bool ComparesByValue(int id);

    /// <summary>The id of the object whose members created object <paramref name="id"/>; -1 for none.</summary>
    int Parent(int id);
}

/// <summary>
/// Finds a cycle made only of objects that compare by value (records, types that override Equals /
/// GetHashCode): their equality and hash code would recurse around it until the stack overflows. The reader
/// refuses such a payload and the writer refuses to send one, so both run this same search.
/// </summary>
/// <remarks>
/// Every such cycle contains a reference back to an earlier object (the other references create the object
/// they name, which comes later), so without one there is nothing to search; with one, a depth-first search
/// over the objects that compare by value (the edges from each to the ones its members created, and the
/// references back) runs in linear time. Each search covers only the objects added since the previous one (a
/// message of many top-level objects searches once per object): the earlier ones are complete and reach no
/// later object, so a new cycle lies among the new objects alone.
/// </remarks>
internal struct ValueCycles
{
    private List<(int From, int To)>? _backEdges; // references back between objects that compare by value
    private int _checkedUpTo; // ids below this were searched

    /// <summary>Records a reference from object <paramref name="from"/> back to the earlier object <paramref name="to"/>, both comparing by value.</summary>
    public void AddBackEdge(int from, int to) => (_backEdges ??= []).Add((from, to));

    public void Clear()
    {
        _backEdges?.Clear();
        _checkedUpTo = 0;
    }

    /// <summary>The id of an object on a cycle among objects 0..<paramref name="count"/>-1 that compare by
    /// value, or -1 when there is none.</summary>
    public int Find(IValueGraph graph, int count, bool firstComparesByValue)
    {
        int first = _checkedUpTo;
        _checkedUpTo = count;
        if (_backEdges is not { Count: > 0 } backEdges)
        {
            return -1;
        }
        bool ByValue(int id) => id == 0 ? firstComparesByValue : graph.ComparesByValue(id);

        // The edges among the new objects (local index = id - first), in compressed rows.
        int m = count - first;
        var edges = new List<(int From, int To)>();
        for (int id = Math.Max(first, 1); id < count; id++)
        {
            int parent = graph.Parent(id);
            if (parent >= first && ByValue(parent) && ByValue(id))
            {
                edges.Add((parent - first, id - first));
            }
        }
        foreach ((int from, int to) in backEdges)
        {
            if (from >= first && to >= first)
            {
                edges.Add((from - first, to - first));
            }
        }
        backEdges.Clear(); // searched now: what comes later adds its own
        int[] start = new int[m + 1];
        foreach ((int from, _) in edges)
        {
            start[from + 1]++;
        }
        for (int i = 0; i < m; i++)
        {
            start[i + 1] += start[i];
        }
        int[] targets = new int[edges.Count];
        int[] fill = (int[])start.Clone();
        foreach ((int from, int to) in edges)
        {
            targets[fill[from]++] = to;
        }

        // Iterative depth-first search: 0 unvisited, 1 on the current path, 2 done.
        byte[] state = new byte[m];
        int[] next = new int[m]; // per object on the path: the index of its next edge to follow
        var path = new Stack<int>();
        for (int root = 0; root < m; root++)
        {
            if (state[root] != 0 || start[root] == start[root + 1])
            {
                continue;
            }
            state[root] = 1;
            next[root] = start[root];
            path.Push(root);
            while (path.Count > 0)
            {
                int node = path.Peek();
                if (next[node] == start[node + 1])
                {
                    state[node] = 2;
                    path.Pop();
                    continue;
                }
                int target = targets[next[node]++];
                if (state[target] == 1)
                {
                    return target + first;
                }
                if (state[target] == 0)
                {
                    state[target] = 1;
                    next[target] = start[target];
                    path.Push(target);
                }
            }
        }
        return -1;
    }
}
