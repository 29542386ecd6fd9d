namespace XCall.Tests.Contracts;

/// <summary>The classic case from the 2004 measurements: needs nothing beyond being public.</summary>
public class Data
{
    public int p;
}

public record Point(int X, int Y);

public record struct Money(decimal Amount, string Currency);

public struct Vec3
{
    public float X;
    public float Y;
    public float Z;
}

public enum Color
{
    Red,
    Green,
    Blue,
}

public sealed class Line
{
    public string Sku = "";
    public int Qty;
}

public sealed class Order
{
    public int Id { get; set; }
    public string? Customer { get; set; }
    public List<Line> Lines { get; set; } = [];
    public Dictionary<string, int>? Tags { get; set; }
    public Point? Origin { get; set; }
    public Money Price { get; set; }
    public DateTime When { get; set; }
    public Guid Key { get; set; }
    public Color Color { get; set; }
    public int? Optional { get; set; }
    public Order? Parent { get; set; }
    public Vec3[]? Path { get; set; }
    public string[]? Notes { get; init; }
}

public sealed class Immutable
{
    public Immutable(int a, string b)
    {
        A = a;
        B = b;
    }

    public int A { get; }
    public string B { get; }
    public int Computed => A * 2;
}
