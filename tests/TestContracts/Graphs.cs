using System.Collections.Immutable;

namespace XCall.Tests.Contracts;

/// <summary>A singly linked list node: mutable, so a list of any length travels breadth-first.</summary>
public sealed class Node
{
    public int Value;
    public Node? Next;

    /// <summary>A list of <paramref name="length"/> nodes holding 0, 1, 2...; built without recursion.</summary>
    public static Node? Chain(int length)
    {
        Node? head = null;
        for (int i = length - 1; i >= 0; i--)
        {
            head = new Node { Value = i, Next = head };
        }
        return head;
    }
}

/// <summary>A vertex with edges to any vertices, itself included: graphs with cycles and shared vertices.</summary>
public sealed class GraphNode
{
    public string Name { get; set; } = "";
    public List<GraphNode> Edges { get; set; } = [];
}

/// <summary>A graph whose root is also one of its nodes.</summary>
public sealed class Graph
{
    public List<GraphNode> Nodes { get; set; } = [];
    public GraphNode? Root { get; set; }
    public int Touches { get; set; }
}

/// <summary>A polymorphic base: only the listed types travel, with their ids.</summary>
[XCallKnownType(typeof(Circle), 1)]
[XCallKnownType(typeof(Square), 2)]
public abstract class Shape
{
    public double X;
    public double Y;
}

public sealed class Circle : Shape
{
    public double Radius;
}

public sealed class Square : Shape
{
    public double Side;
}

/// <summary>A shape that is not a known type of <see cref="Shape"/>: sending one is refused.</summary>
public sealed class Triangle : Shape
{
    public double Base;
}

/// <summary>A positional record: built with its constructor.</summary>
public sealed record Address(string City, string Zip);

/// <summary>A positional record holding another record and an immutable array.</summary>
public sealed record Person(string Name, Address Home, ImmutableArray<string> Tags);

/// <summary>Init-only and required members: built with an object initializer.</summary>
public sealed class Settings
{
    public required string Name { get; init; }
    public int Level { get; init; }
    public Person? Owner { get; init; }
    public HashSet<string> Flags { get; init; } = [];
}
