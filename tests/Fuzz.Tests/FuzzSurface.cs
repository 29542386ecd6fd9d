namespace XCall.Fuzz.Tests;

/// <summary>
/// The contract the frame and argument targets call into: one method per kind of reader the generator
/// emits (primitives, strings, arrays, collections, object graphs with cycles, known types, records that
/// compare by value, immutable records, ref parameters, async and one-way calls).
/// </summary>
[Remotable]
public interface IFuzzSurface
{
    int Add(int a, int b);

    string? Echo(string? text);

    int[]? Ints(int[]? values);

    List<string?>? Strings(List<string?>? values);

    Dictionary<int, string?>? Map(Dictionary<int, string?>? map);

    HashSet<long>? Longs(HashSet<long>? set);

    int Walk(Tree? root);

    int Area(List<Figure?>? figures);

    Entry? Keep(Entry? entry);

    int Links(HashSet<Link?>? links);

    void Swap(ref int a, ref int b);

    Task<int> LaterAsync(int value);

    [OneWay]
    void Post(string? message);
}

/// <summary>A mutable node with any number of children: graphs with shared nodes and cycles.</summary>
public sealed class Tree
{
    public int Value;
    public Tree? Left;
    public List<Tree?>? Children;
}

/// <summary>A polymorphic base with two known types.</summary>
[XCallKnownType(typeof(Disc), 1)]
[XCallKnownType(typeof(Box), 2)]
public abstract class Figure
{
    public double X;
}

public sealed class Disc : Figure
{
    public double Radius;
}

public sealed class Box : Figure
{
    public double Side;
    public Figure? Inner;
}

/// <summary>An immutable positional record: built from its members, compares by value.</summary>
public sealed record Entry(string Name, Entry? Next);

/// <summary>A mutable record: compares by value, so a cycle of them is refused.</summary>
public sealed record class Link
{
    public string Name { get; set; } = "";
    public Link? Next { get; set; }
}

/// <summary>Bounded work on whatever arrives (graphs may be cyclic: walks stop after a fixed count).</summary>
public sealed class FuzzSurface : IFuzzSurface
{
    public int Add(int a, int b) => unchecked(a + b);

    public string? Echo(string? text) => text;

    public int[]? Ints(int[]? values) => values;

    public List<string?>? Strings(List<string?>? values) => values;

    public Dictionary<int, string?>? Map(Dictionary<int, string?>? map) => map;

    public HashSet<long>? Longs(HashSet<long>? set) => set;

    public int Walk(Tree? root)
    {
        int n = 0;
        for (Tree? t = root; t is not null && n < 1000; t = t.Left)
        {
            n += 1 + (t.Children?.Count ?? 0);
        }
        return n;
    }

    public int Area(List<Figure?>? figures) => figures?.Count(f => f is Disc or Box) ?? -1;

    public Entry? Keep(Entry? entry) => entry;

    public int Links(HashSet<Link?>? links) => links?.Count ?? -1; // the set hashed every record on arrival

    public void Swap(ref int a, ref int b) => (a, b) = (b, a);

    public async Task<int> LaterAsync(int value)
    {
        await Task.Yield();
        return value;
    }

    public void Post(string? message)
    {
    }
}
